// Streaming one model round into the turn's event log: the model's deltas as events (stored before any client is
// sent them), the abort of a stopped turn, and the round that begins after a stop and calls no model.
import type { ChatMessage, LlmReply } from '../../llm/llm-gateway.js';
import type { ChatEvent } from '../../streaming/contracts.js';
import { TurnStream } from '../../streaming/turn-stream.js';
import { answerText, keptEvents } from '../../streaming/turn-transcript.js';
import { CANCELLED_FINISH_REASON, type LlmStepInput } from '../contracts/activities.js';
import { memoryFlag } from '../contracts/queue.js';
import type { TurnRef } from '../../conversation/messages.js';
import type { TurnServices } from './turn-services.js';

/** The turn's event stream from `firstSeq` on; `sendAfter` keeps live sends in seq order behind an earlier one. */
export function openStream(
  services: TurnServices,
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

/**
 * Streams one model call into the turn's events; a broken call throws after what it streamed is stored. A stop of
 * the turn while the model streams aborts the call, which then resolves with what arrived (finish `cancelled`).
 * `checkedAt` (epoch ms): when the step began its own read of the stop and the tombstone, which the watch's reads
 * then follow by an interval.
 */
export async function streamRound(
  services: TurnServices,
  input: LlmStepInput,
  stream: TurnStream,
  messages: ChatMessage[],
  checkedAt?: number,
): Promise<LlmReply> {
  let reasoningOpen = false;
  const stop = services.cancellation.watch(
    input,
    (error) =>
      services.log?.warn(`Whether turn ${input.chatMessageId} was stopped could not be read:`, error),
    checkedAt === undefined ? {} : { checkedAt },
  );
  try {
    const reply = await services.llm.streamChat(
      {
        messages,
        tools: services.tools.specs(memoryFlag(input)),
        toolChoice: input.toolsAllowed ? 'auto' : 'none',
        maxTokens: services.settings.maxOutputTokens,
        signal: stop.signal,
      },
      (delta) => {
        if (delta.type === 'reasoning') {
          reasoningOpen = true;
          stream.emit({ type: 'reasoning-delta', delta: delta.text });
        } else if (delta.type === 'reasoning-end') {
          // The Responses API closes each summary part: one `reasoning-end` per part.
          if (reasoningOpen) stream.emit({ type: 'reasoning-end' });
          reasoningOpen = false;
        } else if (delta.type === 'content') {
          if (reasoningOpen) stream.emit({ type: 'reasoning-end' });
          reasoningOpen = false;
          stream.emit({ type: 'content', delta: delta.text });
        }
      },
    );
    if (reasoningOpen) stream.emit({ type: 'reasoning-end' });
    return reply;
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

/**
 * A round that begins after its turn was stopped calls no model. What an earlier attempt of it showed (it was
 * stopped, or its process died, before committing) ends the answer, as the client has it; tool calls it announced
 * (they come after its text) are voided, since they will never run, and reasoning it left open is closed.
 */
export function stoppedRound(stream: TurnStream, stored: readonly ChatEvent[]): LlmReply {
  const kept = keptEvents(stored);
  const calls = kept.filter((event) => event.type === 'tool-call');
  const first = calls[0];
  const last = calls.at(-1);
  if (first && last) stream.emit({ type: 'discard', fromSeq: first.seq, toSeq: last.seq });
  // An attempt that died mid-reasoning left it open: it is closed, as a client expects, before the answer ends.
  const reasoning = kept.filter(
    (event) => event.type === 'reasoning-delta' || event.type === 'reasoning-end',
  );
  if (reasoning.at(-1)?.type === 'reasoning-delta') stream.emit({ type: 'reasoning-end' });
  return { content: answerText(stored), reasoning: '', toolCalls: [], finishReason: CANCELLED_FINISH_REASON };
}
