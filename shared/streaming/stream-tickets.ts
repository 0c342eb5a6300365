// Stream tickets: how a client that cannot send headers (a browser's native EventSource) opens a turn's
// stream. A ticket names its user (so its record is found with one point read) beside 256 random bits.
import { createHash, randomBytes } from 'node:crypto';
import { UnauthenticatedError } from '../errors.js';
import type { Caller } from '../identity/caller.js';
import { userIdSchema } from '../ids.js';
import { STREAM_TICKET_PATTERN } from './contracts.js';

/** The turn a ticket is for: one turn of one user's session. */
export interface StreamTicketTurn {
  userId: string;
  sessionId: string;
  chatMessageId: string;
}

/** What a ticket lets its bearer read: one turn of one user's session, until it expires. */
export interface StreamTicketGrant extends StreamTicketTurn {
  /** ISO 8601. */
  expiresAt: string;
}

/** Where tickets are found: the front door keeps each with the record of the message it streams. */
export interface StreamTicketStore {
  /** The grant of the ticket with this hash for the turn, or undefined (unknown, or removed with its turn). */
  find(turn: StreamTicketTurn, ticketSha256: string): Promise<StreamTicketGrant | undefined>;
}

export interface IssuedStreamTicket {
  ticket: string;
  /** ISO 8601. */
  expiresAt: string;
}

/** A ticket as made, before it is stored: only its hash is kept. */
export interface NewStreamTicket extends IssuedStreamTicket {
  sha256: string;
}

/** The identity provider a ticket's caller carries, so logs can tell how a stream was opened. */
export const STREAM_TICKET_PROVIDER = 'stream-ticket';

export function hashStreamTicket(ticket: string): string {
  return createHash('sha256').update(ticket, 'utf8').digest('hex');
}

/**
 * A fresh ticket for a turn of the user; every call gives a new one (a re-post gets its own). It is valid once
 * stored with the turn's record (PostedMessageStore.claim).
 */
export function newStreamTicket(userId: string, options: { ttlSeconds: number; now: Date }): NewStreamTicket {
  const ticket = `${Buffer.from(userId, 'utf8').toString('base64url')}.${randomBytes(32).toString('base64url')}`;
  const expiresAt = new Date(options.now.getTime() + options.ttlSeconds * 1000).toISOString();
  return { ticket, expiresAt, sha256: hashStreamTicket(ticket) };
}

/**
 * The caller a ticket was issued to, if it is valid for exactly this turn now. Unknown, expired and another
 * turn's tickets are refused alike, so a guess learns nothing.
 */
export async function redeemStreamTicket(
  store: StreamTicketStore,
  ticket: string,
  turn: { sessionId: string; chatMessageId: string },
  now: Date,
): Promise<Caller> {
  const userId = ticketUser(ticket);
  const grant =
    userId === undefined ? undefined : await store.find({ ...turn, userId }, hashStreamTicket(ticket));
  if (
    grant === undefined ||
    grant.userId !== userId ||
    grant.sessionId !== turn.sessionId ||
    grant.chatMessageId !== turn.chatMessageId ||
    Date.parse(grant.expiresAt) <= now.getTime()
  )
    throw new UnauthenticatedError(
      'This stream ticket is not valid for this stream (tickets are for one turn and expire): post the ' +
        'message again with the same chatMessageId and text for a fresh one, or send your identity instead.',
    );
  return { userId: grant.userId, identityProvider: STREAM_TICKET_PROVIDER };
}

/** The user a well-formed ticket names; undefined for anything else. */
function ticketUser(ticket: string): string | undefined {
  const match = STREAM_TICKET_PATTERN.exec(ticket);
  if (match?.[1] === undefined) return undefined;
  const parsed = userIdSchema.safeParse(Buffer.from(match[1], 'base64url').toString('utf8'));
  return parsed.success ? parsed.data : undefined;
}
