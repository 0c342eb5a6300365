// Identifiers of the chat domain. Session ids are made by the server; chat message ids are made by the client
// (seed 000) and must be UUIDs: they are the Service Bus message id of duplicate detection, so a short or
// guessable id could collide with another user's message.
import { randomUUID } from 'node:crypto';
import { z } from 'zod';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A UUID in any version, compared and stored in lower case. */
export const uuidSchema = (what: string) =>
  z
    .string({ error: `${what} must be a string` })
    .regex(UUID, `${what} must be a UUID such as 0f8fad5b-d9cb-469f-a165-70867728950e`)
    .transform((value) => value.toLowerCase());

export const sessionIdSchema = uuidSchema('sessionId');
export const chatMessageIdSchema = uuidSchema('chatMessageId');

export function newSessionId(): string {
  return randomUUID();
}

/** The chatTurn orchestration of a message: one instance per (session, message), so a duplicate is a no-op. */
export function turnInstanceId(sessionId: string, chatMessageId: string): string {
  return `chat-${sessionId}-${chatMessageId}`;
}

/** The `message-completed` message of a turn; its id makes a re-published announcement a duplicate. */
export function completedMessageId(sessionId: string, chatMessageId: string): string {
  return `${sessionId}.${chatMessageId}.completed`;
}
