// Stream tickets: how a client that cannot send headers (a browser's native EventSource) opens a turn's
// stream.
import { createHash, randomBytes } from 'node:crypto';
import { UnauthenticatedError } from '../errors.js';
import type { Caller } from '../identity/caller.js';
import { STREAM_TICKET_PATTERN } from './contracts.js';

/** What a ticket lets its bearer read: one turn of one user's session, until it expires. */
export interface StreamTicketGrant {
  userId: string;
  sessionId: string;
  chatMessageId: string;
  /** ISO 8601. */
  expiresAt: string;
}

export interface StreamTicketStore {
  /** Keeps the grant under the ticket's hash until it expires. */
  save(ticketSha256: string, grant: StreamTicketGrant): Promise<void>;
  /** The grant of the ticket with this hash in the session, or undefined (unknown, or already removed). */
  find(sessionId: string, ticketSha256: string): Promise<StreamTicketGrant | undefined>;
}

export interface IssuedStreamTicket {
  ticket: string;
  /** ISO 8601. */
  expiresAt: string;
}

/** The identity provider a ticket's caller carries, so logs can tell how a stream was opened. */
export const STREAM_TICKET_PROVIDER = 'stream-ticket';

export function hashStreamTicket(ticket: string): string {
  return createHash('sha256').update(ticket, 'utf8').digest('hex');
}

/** A fresh ticket for one turn of the caller; every call gives a new one (a re-post gets its own). */
export async function issueStreamTicket(
  store: StreamTicketStore,
  turn: { userId: string; sessionId: string; chatMessageId: string },
  options: { ttlSeconds: number; now: Date },
): Promise<IssuedStreamTicket> {
  const ticket = randomBytes(32).toString('base64url');
  const expiresAt = new Date(options.now.getTime() + options.ttlSeconds * 1000).toISOString();
  const { userId, sessionId, chatMessageId } = turn;
  await store.save(hashStreamTicket(ticket), { userId, sessionId, chatMessageId, expiresAt });
  return { ticket, expiresAt };
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
  const grant = STREAM_TICKET_PATTERN.test(ticket)
    ? await store.find(turn.sessionId, hashStreamTicket(ticket))
    : undefined;
  if (
    grant === undefined ||
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
