// The front door of a chat turn: checks the caller's ownership of the session, then puts the message on the
// `user-messages` queue. The message id is the chatMessageId (Service Bus drops a re-post within the duplicate
// detection window) and the session id is the chat session (its messages are handled in order).
import { NotFoundError } from '../errors.js';
import type { Caller } from '../identity/caller.js';
import type { MessagePublisher } from '../messaging/message-publisher.js';
import { parseInput } from '../validation.js';
import {
  queuedChatMessageSchema,
  USER_MESSAGES_QUEUE,
  type ChatRequest,
  type ChatSession,
  type QueuedChatMessage,
} from './contracts.js';
import type { SessionStore } from './session-store.js';

export interface PostChatMessageServices {
  sessions: SessionStore;
  publisher: MessagePublisher;
  now?: () => Date;
}

/** Resolves once the message is on the queue. Nothing is queued when any check fails. */
export async function postChatMessage(
  services: PostChatMessageServices,
  caller: Caller,
  request: ChatRequest,
): Promise<QueuedChatMessage> {
  await requireSession(services.sessions, caller, request.sessionId);
  const message = parseInput(
    queuedChatMessageSchema,
    {
      userId: caller.userId,
      sessionId: request.sessionId,
      chatMessageId: request.chatMessageId,
      text: request.text,
      postedAt: (services.now?.() ?? new Date()).toISOString(),
    } satisfies QueuedChatMessage,
    'queued chat message',
  );
  await services.publisher.publish(USER_MESSAGES_QUEUE, {
    body: message,
    messageId: message.chatMessageId,
    sessionId: message.sessionId,
    subject: 'chat-message',
  });
  return message;
}

/** The caller's session; another user's session is reported exactly like an unknown one. */
export async function requireSession(
  sessions: SessionStore,
  caller: Caller,
  sessionId: string,
): Promise<ChatSession> {
  const session = await sessions.find(caller.userId, sessionId);
  if (session === undefined)
    throw new NotFoundError(
      `No session '${sessionId}' for this user: start one with POST /api/session/start.`,
    );
  return session;
}
