// The front door of a chat turn: checks the caller's ownership of the session, records the message as accepted
// in its session, gives the caller a ticket to the turn's stream, then puts the message on the `user-messages`
// queue. Every idempotency key is scoped to the session (DESIGN §6): the record's id and the queue message id
// name the session and the chatMessageId, so another session's, or another user's, message with the same id is
// a different message. The same id re-posted with the same text is the same message: it is published again,
// identical (original postedAt), which covers a crash between recording and publishing, while the broker's
// duplicate detection and the turn's orchestration instance id keep it to one answer. With another text: 409.
import { createHash } from 'node:crypto';
import { ConflictError, NotFoundError } from '../errors.js';
import type { Caller } from '../identity/caller.js';
import type { MessagePublisher } from '../messaging/message-publisher.js';
import {
  issueStreamTicket,
  type IssuedStreamTicket,
  type StreamTicketStore,
} from '../streaming/stream-tickets.js';
import { parseInput } from '../validation.js';
import {
  memoryFlag,
  queuedChatMessageSchema,
  queuedMessageId,
  USER_MESSAGES_QUEUE,
  type ChatRequest,
  type ChatSession,
  type QueuedChatMessage,
} from './contracts.js';
import type { PostedMessageStore } from './posted-message-store.js';
import type { SessionStore } from './session-store.js';

export interface PostChatMessageServices {
  sessions: SessionStore;
  posted: PostedMessageStore;
  publisher: MessagePublisher;
  tickets: StreamTicketStore;
  /** How long the stream ticket of the answer opens its stream. */
  ticketTtlSeconds: number;
  now?: () => Date;
}

export interface PostedChatMessage {
  /** The message as queued: for a re-post, the first post's (same postedAt). */
  message: QueuedChatMessage;
  /** Opens the turn's stream without headers; a fresh one on every post. */
  ticket: IssuedStreamTicket;
}

/** Resolves once the message is on the queue. Nothing is queued when any check fails. */
export async function postChatMessage(
  services: PostChatMessageServices,
  caller: Caller,
  request: ChatRequest,
): Promise<PostedChatMessage> {
  const now = services.now?.() ?? new Date();
  await requireSession(services.sessions, caller, request.sessionId);
  const textSha256 = createHash('sha256').update(request.text, 'utf8').digest('hex');
  const accepted = await services.posted.claim({
    userId: caller.userId,
    sessionId: request.sessionId,
    chatMessageId: request.chatMessageId,
    textSha256,
    postedAt: now.toISOString(),
  });
  if (accepted.textSha256 !== textSha256)
    throw new ConflictError(
      `chatMessageId '${request.chatMessageId}' was already posted in this session with a different text: ` +
        'send a new message with a new chatMessageId (re-posting the same text with the same id is safe).',
    );
  const message = parseInput(
    queuedChatMessageSchema,
    {
      userId: caller.userId,
      sessionId: request.sessionId,
      chatMessageId: request.chatMessageId,
      text: request.text,
      postedAt: accepted.postedAt,
      // Only when off: absent means on, so a message posted without the flag keeps the shape it always had.
      ...memoryFlag(request),
    } satisfies QueuedChatMessage,
    'queued chat message',
  );
  const ticket = await issueStreamTicket(services.tickets, message, {
    ttlSeconds: services.ticketTtlSeconds,
    now,
  });
  await services.publisher.publish(USER_MESSAGES_QUEUE, {
    body: message,
    messageId: queuedMessageId(message.sessionId, message.chatMessageId),
    sessionId: message.sessionId,
    subject: 'chat-message',
  });
  return { message, ticket };
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
