// Streaming one model round into the turn's event log: the model's deltas as events (stored before any client is
// sent them), and the abort of a turn stopped while the model streams.
import type { ChatMessage, ToolSpec } from '../../llm/llm-gateway.js';
import type { RoundReply } from './turn-effects.js';
import { TurnStream } from '../../streaming/turn-stream.js';
import { groupsFlag, memoryFlag, modelFlag } from '../contracts/queue.js';
import type { TurnRef } from '../../conversation/messages.js';
import { namedServers } from '../../mcp/tool-names.js';
import type { ModelPorts, StreamPorts } from './turn-services.js';

/** The turn's event stream from `firstSeq` on; `sendAfter` keeps live sends in seq order behind an earlier one. */
export function openStream(
  services: StreamPorts,
  ref: TurnRef,
  firstSeq: number,
  sendAfter?: Promise<void>,
): TurnStream {
  return new TurnStream({
    ...ref,
    firstSeq,
    ...(sendAfter ? { sendAfter } : {}),
    store: services.events,
    sink: services.sink,
    coalescing: services.settings.coalescing,
    onSendError: (error) => services.log?.warn(`Live delivery of turn ${ref.chatMessageId} failed:`, error),
  });
}

/** One model call of a round: its prompt, whether it may ask for tools, when the stop was last read. */
export interface RoundCall {
  messages: ChatMessage[];
  toolsAllowed: boolean;
  watchFrom: number | undefined;
  /** The built-in tools the conversation's assistant names; absent: all of them. */
  tools?: readonly string[] | undefined;
  /** The client's own tools (the OpenAI-compatible API), offered after the turn's. */
  clientTools?: readonly ToolSpec[] | undefined;
}

/**
 * Streams one model call into the turn's events; a broken call throws after what it streamed is stored. A stop of
 * the turn while the model streams aborts the call, which then resolves with what arrived (finish `cancelled`).
 * `watchFrom` (epoch ms): when the step began its own read of the stop and the tombstone, which the watch's reads
 * then follow by an interval (absent: the watch reads at once).
 */
export async function streamRound(
  services: ModelPorts,
  input: TurnRef & {
    useMemory?: boolean | undefined;
    groups?: readonly string[] | undefined;
    model?: string | undefined;
  },
  stream: TurnStream,
  { messages, toolsAllowed, watchFrom: checkedAt, tools: named, clientTools = [] }: RoundCall,
): Promise<RoundReply> {
  let reasoningOpen = false;
  const clock = () => (services.now?.() ?? new Date()).getTime();
  // How long the model reasoned: from each summary part's first text to its end (or the answer's first text).
  let reasoningMs: number | undefined;
  let reasoningFrom = 0;
  const reasoningEnds = () => {
    if (reasoningOpen) {
      stream.emit({ type: 'reasoning-end' });
      reasoningMs = (reasoningMs ?? 0) + Math.max(0, clock() - reasoningFrom);
    }
    reasoningOpen = false;
  };
  const stop = services.cancellation.watch(
    input,
    (error) =>
      services.log?.warn(`Whether turn ${input.chatMessageId} was stopped could not be read:`, error),
    checkedAt === undefined ? {} : { checkedAt },
  );
  try {
    // The user's MCP tools come after the built-in ones (their names cannot clash: they start with mcp__).
    const userTools =
      services.userTools === undefined
        ? []
        : await services.userTools.specs(
            { userId: input.userId, ...groupsFlag(input), ...serversFlag(named) },
            services.log,
          );
    // The files' bytes are read for this call only: the turn's record keeps their ids.
    const sent = services.attachments ? await services.attachments(input.userId, messages) : messages;
    const reply = await services.llm.streamChat(
      {
        messages: sent,
        tools: [
          ...services.tools.specs({ ...memoryFlag(input), ...(named ? { only: named } : {}) }),
          ...userTools,
          ...clientTools,
        ],
        toolChoice: toolsAllowed ? 'auto' : 'none',
        maxTokens: services.settings.maxOutputTokens,
        signal: stop.signal,
        ...modelFlag(input),
      },
      (delta) => {
        if (delta.type === 'reasoning') {
          if (!reasoningOpen) reasoningFrom = clock();
          reasoningOpen = true;
          stream.emit({ type: 'reasoning-delta', delta: delta.text });
        } else if (delta.type === 'reasoning-end') {
          // The Responses API closes each summary part: one `reasoning-end` per part.
          reasoningEnds();
        } else if (delta.type === 'content') {
          reasoningEnds();
          stream.emit({ type: 'content', delta: delta.text });
        }
      },
    );
    reasoningEnds();
    return reasoningMs === undefined ? reply : { ...reply, reasoningMs: Math.round(reasoningMs) };
  } catch (error) {
    // Stored now, the partial text is what the retried round voids (or what a failed turn keeps).
    await stream.close().catch(() => undefined);
    services.log?.warn(
      `The model's stream broke after ${stream.emitted.length} events of turn ${input.chatMessageId}:`,
      error,
    );
    throw error;
  } finally {
    stop.close();
  }
}

/** The MCP servers a conversation's tools name, as the user's MCP tools take them; nothing when it names no tools. */
export function serversFlag(tools: readonly string[] | undefined): { servers?: string[] } {
  const servers = namedServers(tools);
  return servers === undefined ? {} : { servers };
}
