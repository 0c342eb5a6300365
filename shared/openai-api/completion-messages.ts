// A Chat Completions request's messages as a turn takes them: the last user message is the turn's text, and the
// messages before it are the context the model reads as given (system and developer become system messages).
import { ValidationError } from '../errors.js';
import type { ChatMessage } from '../llm/llm-gateway.js';
import type { CompletionMessage } from './contracts.js';

/** What a request posts: the user's text, and the messages the model reads before it. */
export interface CompletionTurnText {
  text: string;
  context: ChatMessage[];
}

/** The text of a message's content: a string, or its text parts joined. */
export function contentText(content: CompletionMessage['content'] | null | undefined): string {
  if (content === null || content === undefined) return '';
  return typeof content === 'string' ? content : content.map((part) => part.text).join('');
}

/** The turn's text (the last message, which must be the user's) and the context before it. */
export function splitMessages(messages: readonly CompletionMessage[]): CompletionTurnText {
  const last = messages.at(-1);
  if (last?.role !== 'user')
    throw new ValidationError(
      'Invalid chat completion request: the last message must be the user\'s (role "user").',
      [{ path: 'messages', message: 'must end with a user message' }],
    );
  const text = contentText(last.content);
  if (text.trim() === '')
    throw new ValidationError('Invalid chat completion request: the last user message has no text.', [
      { path: 'messages', message: 'must end with a user message that has text' },
    ]);
  return { text, context: messages.slice(0, -1).map(toChatMessage) };
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
