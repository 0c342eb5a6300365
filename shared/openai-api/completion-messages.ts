// A Chat Completions request's messages as a turn takes them: the last user message is the turn's text, and the
// messages before it are the context the model reads as given (system and developer become system messages).
import { ValidationError } from '../errors.js';
import type { ChatMessage } from '../llm/llm-gateway.js';
import type { CompletionMessage } from './contracts.js';

/**
 * What a request posts: the user's text, the messages the model reads before it, and what followed it (the model's
 * calls of the client's tools and their results, when the request continues such a turn).
 */
export interface CompletionTurnText {
  text: string;
  context: ChatMessage[];
  followUp: ChatMessage[];
}

/** The text of a message's content: a string, or its text parts joined. */
export function contentText(content: CompletionMessage['content'] | null | undefined): string {
  if (content === null || content === undefined) return '';
  return typeof content === 'string' ? content : content.map((part) => part.text).join('');
}

/**
 * The turn's text (the last user message), the context before it, and what follows it: only the model's tool calls
 * and the client's results (the request that carries them continues the turn that handed the calls back).
 */
export function splitMessages(messages: readonly CompletionMessage[]): CompletionTurnText {
  const at = messages.findLastIndex((message) => message.role === 'user');
  const last = messages[at];
  const after = messages.slice(at + 1);
  if (
    last?.role !== 'user' ||
    after.some((message) => message.role !== 'assistant' && message.role !== 'tool')
  )
    throw invalidMessages(
      'the last message must be the user\'s (role "user"), or be followed only by tool calls and their results',
    );
  const text = contentText(last.content);
  if (text.trim() === '') throw invalidMessages('the last user message has no text');
  return {
    text,
    context: messages.slice(0, at).map(toChatMessage),
    followUp: after.map(toChatMessage),
  };
}

/**
 * Each `tool` message answers a call an earlier assistant message made and nothing answered yet, when the messages
 * are the whole context (a stateless request): the model's provider refuses any other, which would fail the turn
 * after it was queued instead of refusing the request.
 */
export function assertResultsAnswerCalls(messages: readonly CompletionMessage[]): void {
  const open = new Set<string>();
  for (const message of messages) {
    if (message.role === 'assistant') for (const call of message.tool_calls ?? []) open.add(call.id);
    if (message.role !== 'tool') continue;
    if (!open.delete(message.tool_call_id))
      throw invalidMessages(
        `the tool result for "${message.tool_call_id}" answers no call of an earlier assistant message (or answers one twice)`,
      );
  }
}

function invalidMessages(problem: string): ValidationError {
  return new ValidationError(`Invalid chat completion request: ${problem}.`, [
    { path: 'messages', message: problem },
  ]);
}

export function toChatMessage(message: CompletionMessage): ChatMessage {
  switch (message.role) {
    case 'system':
    case 'developer':
      return { role: 'system', content: contentText(message.content) };
    case 'user':
      return { role: 'user', content: contentText(message.content) };
    case 'assistant':
      return {
        role: 'assistant',
        content: contentText(message.content),
        ...(message.tool_calls?.length
          ? {
              tool_calls: message.tool_calls.map((call) => ({
                id: call.id,
                name: call.function.name,
                arguments: call.function.arguments,
              })),
            }
          : {}),
      };
    case 'tool':
      return { role: 'tool', tool_call_id: message.tool_call_id, content: contentText(message.content) };
  }
}
