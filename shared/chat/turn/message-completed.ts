// The `message-completed` announcement of a turn that ended: its committed messages, cut to fit a Service Bus
// message when they must, published once the turn is known kept (a duplicate is dropped by its message id).
import { parseInput } from '../../validation.js';
import {
  completedMessageId,
  MESSAGE_COMPLETED_MAX_BYTES,
  MESSAGE_COMPLETED_TOPIC,
  messageCompletedSchema,
  type MessageCompleted,
} from '../../conversation/message-completed.js';
import { groupsFlag, memoryFlag } from '../contracts/queue.js';
import type { ConversationMessage, TurnRef } from '../../conversation/messages.js';
import { opensConversation } from '../header-touch.js';
import { turnMessagesIn } from '../../conversation/active-path.js';
import type { WorkingMemory } from '../../conversation/working-memory-store.js';
import type { TurnServices } from './turn-services.js';
import { writeScope, type ScopedShape } from '../../conversation/memory-scope.js';

/**
 * Announces the turn with its committed messages (found in `stored`, working memory after the commit). The turn
 * that opened the conversation (its message has ordinal 0) carries the conversation's system prompt too, so
 * history keeps it as the conversation's first message; the prompt is taken from working memory, so a commit that
 * is announced again says the same.
 */
export async function announce(
  services: Pick<TurnServices, 'publisher'>,
  input: TurnRef & ScopedShape & { useMemory?: boolean | undefined; groups?: readonly string[] | undefined },
  outcome: MessageCompleted['outcome'],
  completedAt: string,
  stored: Pick<WorkingMemory, 'messages' | 'offPath' | 'systemPrompt'>,
): Promise<void> {
  const ref: TurnRef = {
    userId: input.userId,
    sessionId: input.sessionId,
    chatMessageId: input.chatMessageId,
  };
  // The turn is the leaf after its commit; announced again after a switch, it may be off the path by then.
  const turn = turnMessagesIn(stored, ref.chatMessageId);
  const systemPrompt = opensConversation(ref, turn) ? stored.systemPrompt : undefined;
  const body = parseInput(
    messageCompletedSchema,
    completedBody(
      {
        ...ref,
        outcome,
        completedAt,
        ...memoryFlag(input),
        ...groupsFlag(input),
        // What the turn teaches stays in its project's or its assistant's own memory when it has one.
        ...(writeScope(input) === 'user' ? {} : { memoryScope: writeScope(input) }),
        ...(systemPrompt ? { systemPrompt } : {}),
      },
      turn,
    ),
    'message-completed body',
  );
  await services.publisher.publish(MESSAGE_COMPLETED_TOPIC, {
    body,
    messageId: completedMessageId(ref.sessionId, ref.chatMessageId),
    sessionId: ref.sessionId,
    subject: outcome,
  });
}

/**
 * The `message-completed` body: the turn's messages whole, or, when they would not fit a Service Bus message, cut
 * (complete: false) step by step until they do: their tool calls' arguments and results first, then their sources'
 * excerpts, then their sources. A consumer that needs them whole reads them from working memory.
 */
export function completedBody(
  head: Omit<MessageCompleted, 'messages' | 'complete'>,
  messages: readonly ConversationMessage[],
): MessageCompleted {
  let cut = messages.map((message) => ({ ...message, ordinal: message.ordinal ?? 0 }));
  const whole: MessageCompleted = { ...head, messages: cut, complete: true };
  if (fitsServiceBus(whole)) return whole;
  let body: MessageCompleted = whole;
  for (const shorten of [cutToolCalls, withoutExcerpts, withoutSources]) {
    cut = cut.map(shorten);
    body = { ...head, messages: cut, complete: false };
    if (fitsServiceBus(body)) break;
  }
  return body;
}

function fitsServiceBus(body: MessageCompleted): boolean {
  return Buffer.byteLength(JSON.stringify(body), 'utf8') <= MESSAGE_COMPLETED_MAX_BYTES;
}

type CompletedMessage = MessageCompleted['messages'][number];

function cutToolCalls(message: CompletedMessage): CompletedMessage {
  if (message.toolCalls === undefined) return message;
  const toolCalls = message.toolCalls.map((call) => ({
    ...call,
    arguments: call.arguments.slice(0, 1_000),
    result: call.result.slice(0, 1_000),
  }));
  return { ...message, toolCalls };
}

function withoutExcerpts(message: CompletedMessage): CompletedMessage {
  if (message.sources === undefined) return message;
  return { ...message, sources: message.sources.map((source) => ({ ...source, excerpt: '' })) };
}

function withoutSources(message: CompletedMessage): CompletedMessage {
  const { sources: _sources, ...rest } = message;
  return rest;
}
