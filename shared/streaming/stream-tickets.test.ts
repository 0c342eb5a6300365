// Stream tickets over an in-memory store: random, naming their user, stored only as a hash, and redeemed only for
// their own turn before they expire; every refusal reads the same.
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { MemoryStreamTickets } from '../../test/support/in-memory-ports.js';
import { UnauthenticatedError } from '../errors.js';
import { hashStreamTicket, newStreamTicket, redeemStreamTicket } from './stream-tickets.js';

const turn = { userId: 'user_001', sessionId: randomUUID(), chatMessageId: randomUUID() };
const issuedAt = new Date('2026-11-22T10:00:00.000Z');
const at = (seconds: number) => new Date(issuedAt.getTime() + seconds * 1000);

/** A ticket issued for the turn and kept as the front door keeps it (its hash, with the turn's record). */
async function issued(store: MemoryStreamTickets) {
  const ticket = newStreamTicket(turn.userId, { ttlSeconds: 900, now: issuedAt });
  await store.save(ticket.sha256, { ...turn, expiresAt: ticket.expiresAt });
  return ticket;
}

describe('stream tickets', () => {
  it('name their user beside 256 random bits, are new each time, and only their SHA-256 is stored', async () => {
    const store = new MemoryStreamTickets();
    const one = await issued(store);
    const two = await issued(store);
    const userPart = Buffer.from('user_001').toString('base64url');
    expect(one.ticket).toMatch(new RegExp(`^${userPart}\\.[A-Za-z0-9_-]{43}$`));
    expect(two.ticket).not.toBe(one.ticket);
    expect(one.sha256).toBe(hashStreamTicket(one.ticket));
    expect(one.expiresAt).toBe('2026-11-22T10:15:00.000Z');
    expect(JSON.stringify([...store.grants])).not.toContain(one.ticket);
  });

  it('give the caller they were issued to, for exactly their turn, until they expire', async () => {
    const store = new MemoryStreamTickets();
    const { ticket } = await issued(store);
    await expect(redeemStreamTicket(store, ticket, turn, at(899))).resolves.toEqual({
      userId: 'user_001',
      identityProvider: 'stream-ticket',
    });

    const [userPart, random = ''] = ticket.split('.');
    const refusals = [
      redeemStreamTicket(store, ticket, turn, at(900)),
      redeemStreamTicket(store, ticket, { ...turn, chatMessageId: randomUUID() }, at(1)),
      redeemStreamTicket(store, ticket, { ...turn, sessionId: randomUUID() }, at(1)),
      redeemStreamTicket(
        store,
        `${userPart}.${random.replace(/^./, (c) => (c === 'A' ? 'B' : 'A'))}`,
        turn,
        at(1),
      ),
      // The same random part under another user's name.
      redeemStreamTicket(store, `${Buffer.from('user_002').toString('base64url')}.${random}`, turn, at(1)),
      // A name that is no user id, and no ticket at all.
      redeemStreamTicket(store, `${Buffer.from('../x').toString('base64url')}.${random}`, turn, at(1)),
      redeemStreamTicket(store, random, turn, at(1)),
      redeemStreamTicket(store, 'short', turn, at(1)),
    ];
    const messages = new Set<string>();
    for (const refusal of refusals) {
      const error = await refusal.then(
        () => undefined,
        (reason: unknown) => reason,
      );
      expect(error).toBeInstanceOf(UnauthenticatedError);
      messages.add((error as Error).message);
    }
    // Unknown, expired and another turn's tickets are refused alike: a guess learns nothing.
    expect(messages.size).toBe(1);
  });
});
