// The front door of a chat turn: checks the message and the caller's ownership of the session, then puts it on
// the `user-messages` queue. The message id is the chatMessageId (Service Bus drops a re-post within the
// duplicate detection window) and the session id is the chat session (its messages are handled in order).
import type { Caller } from '../identity/caller.js';
import { assertOwnUser } from '../identity/caller.js';
import { NotFoundError } from '../errors.js';
import type { MessagePublisher } from '../messaging/message-publisher.js';
import { USER_MESSAGES_QUEUE } from '../resources.js';
import { chatRequestSchema, parseInput, type QueuedChatMessage } from './chat-message.js';
import type { SessionStore } from './sessions.js';

export interface PostChatMessageServices {
  sessions: SessionStore;
  publisher: MessagePublisher;
  maxTextChars: number;
  now?: () => Date;
}

/** Resolves once the message is on the queue. Nothing is queued when any check fails. */
export async function postChatMessage(
  services: PostChatMessageServices,
  caller: Caller,
  body: unknown,
): Promise<QueuedChatMessage> {
  const request = parseInput(chatRequestSchema(services.maxTextChars), body, 'chat message');
  assertOwnUser(caller, request.userId);
  await requireSession(services.sessions, caller, request.sessionId);
  const message: QueuedChatMessage = {
    userId: caller.userId,
    sessionId: request.sessionId,
    chatMessageId: request.chatMessageId,
    text: request.text,
    postedAt: (services.now?.() ?? new Date()).toISOString(),
  };
  await services.publisher.publish(USER_MESSAGES_QUEUE, {
    body: message,
    messageId: message.chatMessageId,
    sessionId: message.sessionId,
    subject: 'chat-message',
  });
  return message;
}

/** The caller's session; another user's session is reported exactly like an unknown one. */
export async function requireSession(sessions: SessionStore, caller: Caller, sessionId: string) {
  const session = await sessions.find(caller.userId, sessionId);
  if (session === undefined)
    throw new NotFoundError(
      `No session '${sessionId}' for this user: start one with POST /api/session/start.`,
    );
  return session;
}
