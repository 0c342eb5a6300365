// Builds `message-completed` events as the chat's commit publishes them, for the tests of the workers and triggers
// that consume them: an envelope around given messages, or one exchange (a question and its answer, or a failure).
import type { MessageCompleted } from '../../shared/conversation/message-completed.js';
import type { TurnBranch } from '../../shared/conversation/branches.js';

type TurnMessage = MessageCompleted['messages'][number];

/** What an answer carries beside its text: finish reason, tool calls, usage, sources. */
export type AnswerParts = Partial<
  Omit<TurnMessage, 'messageId' | 'chatMessageId' | 'role' | 'content' | 'timestamp' | 'ordinal' | 'branch'>
>;

export interface Exchange {
  chatMessageId: string;
  /** The user's message's ordinal; the answer takes the next one. */
  ordinal: number;
  question: string;
  /** Both messages' timestamp. */
  at: string;
  /** The answer; none for a failed turn, whose user message then carries `failure`. */
  answer?: { content: string } & AnswerParts;
  /** The turn failed: its answer, if given, is left out. */
  failed?: boolean;
  failure?: { code: string; message: string };
  /** Set on both messages. */
  branch?: TurnBranch;
}

/** The failure of a turn the model did not answer, as the chat records it on the user's message. */
export const MODEL_UNAVAILABLE = { code: 'model_unavailable', message: 'The model did not answer.' };

/** An exchange's messages with their ordinals and the ids the chat gives them (`{chatMessageId}_{role}`). */
export function exchangeMessages(exchange: Exchange): TurnMessage[] {
  const { chatMessageId, ordinal, question, at } = exchange;
  const answer = exchange.failed === true ? undefined : exchange.answer;
  const messages: TurnMessage[] = [
    {
      messageId: `${chatMessageId}_user`,
      chatMessageId,
      role: 'user',
      content: question,
      timestamp: at,
      ordinal,
      ...(answer === undefined ? { failure: exchange.failure ?? MODEL_UNAVAILABLE } : {}),
    },
  ];
  if (answer !== undefined) {
    const { content, ...parts } = answer;
    messages.push({
      messageId: `${chatMessageId}_assistant`,
      chatMessageId,
      role: 'assistant',
      content,
      timestamp: at,
      ...parts,
      ordinal: ordinal + 1,
    });
  }
  if (exchange.branch !== undefined) for (const message of messages) message.branch = exchange.branch;
  return messages;
}

/**
 * The event announcing a turn's messages: completed and whole (not cut to fit the bus) unless told otherwise, at
 * the time of its newest message unless `completedAt` is given.
 */
export function messageCompleted(
  event: Pick<MessageCompleted, 'userId' | 'sessionId' | 'chatMessageId' | 'messages'> &
    Partial<MessageCompleted>,
): MessageCompleted {
  return {
    outcome: 'completed',
    completedAt: event.messages.at(-1)?.timestamp ?? new Date().toISOString(),
    complete: true,
    ...event,
  };
}

/** The event of one exchange: completed with its answer, failed without one. */
export function completedExchange(
  exchange: Exchange & { userId: string; sessionId: string } & Partial<
      Pick<MessageCompleted, 'useMemory' | 'systemPrompt' | 'complete'>
    >,
): MessageCompleted {
  const { userId, sessionId, chatMessageId, at, useMemory, systemPrompt, complete } = exchange;
  return messageCompleted({
    userId,
    sessionId,
    chatMessageId,
    outcome: exchange.failed === true || exchange.answer === undefined ? 'failed' : 'completed',
    completedAt: at,
    ...(complete === undefined ? {} : { complete }),
    ...(useMemory === undefined ? {} : { useMemory }),
    ...(systemPrompt === undefined ? {} : { systemPrompt }),
    messages: exchangeMessages(exchange),
  });
}
