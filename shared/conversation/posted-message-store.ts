// The port of posted messages: one record per message the front door accepted, keyed by session and
// chatMessageId, so a re-post is recognised (same text: the same message again) or refused (different text).
// Adapter: chat/adapters/cosmos-posted-message-store.ts, in the `sessions` container beside the session.
import type { ChatSession } from './session-store.js';
import { z } from 'zod';
import { userIdSchema } from '../ids.js';
import { turnForkSchema } from './branches.js';

/** The id of a posted message's record in the `sessions` container (beside its session, in the owner's partition). */
export function postedMessageDocumentId(sessionId: string, chatMessageId: string): string {
  return `posted.${sessionId}.${chatMessageId}`;
}

/** What the front door remembers of an accepted message: enough to tell a re-post from a different message. */
export const postedMessageSchema = z.object({
  userId: userIdSchema,
  sessionId: z.string(),
  chatMessageId: z.string(),
  /** SHA-256 of the text (hex): a re-post is recognised without keeping the text twice. */
  textSha256: z.string().regex(/^[0-9a-f]{64}$/),
  /** When it was first accepted; a re-post is re-published with it, so it is the same message. */
  postedAt: z.iso.datetime(),
  /** What it replaces (an edit or a regenerate): a re-post must replace the same turn to be the same message. */
  fork: turnForkSchema.optional(),
  /** Posted with use_memory false; a regenerate of it keeps the choice. Absent means true. */
  useMemory: z.literal(false).optional(),
});
export type PostedMessage = z.infer<typeof postedMessageSchema>;

/**
 * What a claim found: the message as recorded in the caller's live session; no such session of the caller (nothing
 * was written); or the caller's session being deleted, or deleted (nothing of the message is kept either).
 */
export type PostedClaim =
  | { kind: 'recorded'; posted: PostedMessage; session?: ChatSession }
  | { kind: 'no-session' }
  | { kind: 'session-deleted' };

/** A stream ticket kept with the message it streams: its hash only, and when it expires (ISO 8601). */
export interface PostedStreamTicket {
  sha256: string;
  expiresAt: string;
}

export interface PostedMessageStore {
  /**
   * Records the message as accepted in the caller's session unless it already has one with that chatMessageId;
   * either way, what is recorded now: the given message, or the one accepted first (its text hash and postedAt).
   * The session is read in the same isolated step as the record is written, so a delete of the conversation (which
   * marks the session first) either finds the record to purge or is found here. A ticket is kept with the record
   * (a re-post's beside the first post's, the newest few), whatever the claim found of an earlier post.
   */
  claim(message: PostedMessage, ticket?: PostedStreamTicket): Promise<PostedClaim>;
  /** The accepted message with that chatMessageId in the user's session; undefined when none was accepted. */
  find(userId: string, sessionId: string, chatMessageId: string): Promise<PostedMessage | undefined>;
  /** The session's `count` most recently accepted messages, newest first (one bounded query). */
  latest(userId: string, sessionId: string, count: number): Promise<PostedMessage[]>;
}
