// The commit of an answered turn: the user's message and the answer (its text over every round, usage, tool calls
// and sources) written on the turn's branch, the header touched, then the stream ended with `message-end`.
import type { LlmReply } from '../../llm/llm-gateway.js';
import type { KnowledgeSource } from '../../conversation/sources.js';
import type { TurnStream } from '../../streaming/turn-stream.js';
import { assistantMessageId, userMessageId } from '../../conversation/turn-ids.js';
import { TOOL_ROUNDS_EXHAUSTED, type LlmStepInput } from '../contracts/activities.js';
import type { ConversationMessage, StoredToolCall, TurnRef } from '../../conversation/messages.js';
import type { ToolResultRecord, TurnRecord } from '../contracts/documents.js';
import { headerTouch } from '../header-touch.js';
import type { WorkingMemory } from '../../conversation/working-memory-store.js';
import { announce } from './message-completed.js';
import { freeQuotaSlot, logTurnEnd, type RoundResult, type TurnEnd } from './turn-end.js';
import { commitMessages } from './turn-place.js';
import { now, type TurnServices } from './turn-services.js';
import { totalUsage } from './turn-usage.js';

/** The round that answers, as it ends: its reply, and the turn it completes. */
export interface Answer {
  record: TurnRecord;
  reply: LlmReply;
  stream: TurnStream;
  /** Working memory on the turn's path. */
  memory: WorkingMemory;
  toolResults: readonly ToolResultRecord[];
  sources: KnowledgeSource[];
}

/**
 * Commits the answer, then ends the stream. The last coalesced text is still held, so it goes out with
 * `message-end` in one stored batch. The tombstone is not read first: a conversation deleted meanwhile (its delete
 * stopped the model stream, or came after it) is found by the step's own read after its writes, which erases them.
 */
export async function commitAnswer(
  services: TurnServices,
  input: LlmStepInput,
  { record, reply, stream, memory, toolResults, sources }: Answer,
): Promise<RoundResult> {
  await stream.settle();
  const finishReason =
    !input.toolsAllowed && reply.finishReason === 'tool_calls' ? TOOL_ROUNDS_EXHAUSTED : reply.finishReason;
  const usage = totalUsage([...record.rounds.map((round) => round.usage), reply.usage]);
  const assistant: ConversationMessage = {
    messageId: assistantMessageId(input.chatMessageId),
    chatMessageId: input.chatMessageId,
    role: 'assistant',
    content: record.rounds.map((round) => round.content).join('') + reply.content,
    timestamp: now(services),
    finishReason,
    ...(usage ? { usage } : {}),
    ...toolCallsField(record, toolResults),
    ...(sources.length > 0 ? { sources } : {}),
  };
  const stored = await commitMessages(services, input, [userMessage(record), assistant], memory, record);
  // The header before message-end (list read-your-writes), while text emitted during the commit is stored.
  await Promise.all([touchHeader(services, input, stored), stream.settle(), freeQuotaSlot(services, input)]);
  const cost = usage && services.pricing ? services.pricing(usage, reply.model) : undefined;
  stream.emit({ type: 'message-end', finishReason, ...(usage ? { usage } : {}), ...(cost ? { cost } : {}) });
  await stream.close();
  // Whoever ends the stream logs the turn's line: an attempt run again after this finds the stream ended.
  const end: TurnEnd = { finishReason, usage, rounds: record.rounds.length + 1, postedAt: record.postedAt };
  return {
    output: { outcome: 'answered', nextSeq: stream.nextSeq, toolCalls: [], finishReason },
    announce: () => {
      logTurnEnd(services, input, end);
      return announce(services, input, 'completed', assistant.timestamp, stored);
    },
  };
}

/** The user's message of a turn, as committed. */
export function userMessage(
  turn: Pick<TurnRecord, 'chatMessageId' | 'userText' | 'postedAt'>,
): ConversationMessage {
  return {
    messageId: userMessageId(turn.chatMessageId),
    chatMessageId: turn.chatMessageId,
    role: 'user',
    content: turn.userText,
    timestamp: turn.postedAt,
  };
}

function toolCallsField(
  record: TurnRecord,
  results: readonly ToolResultRecord[],
): { toolCalls?: StoredToolCall[] } {
  const toolCalls: StoredToolCall[] = record.rounds.flatMap((round) =>
    round.toolCalls.map((call, index) => {
      const result = results.find((r) => r.round === round.round && r.index === index);
      return {
        id: call.id,
        name: call.name,
        arguments: call.arguments,
        result: result?.result ?? '',
        isError: result?.isError ?? true,
        round: round.round,
      };
    }),
  );
  return toolCalls.length > 0 ? { toolCalls } : {};
}

/** Keeps the conversation's header live after a commit, from working memory as the commit left it. */
export async function touchHeader(
  services: TurnServices,
  ref: TurnRef,
  memory: WorkingMemory,
): Promise<void> {
  const touch = headerTouch(ref, memory);
  if (touch !== undefined) await services.headers.touch(touch);
}
