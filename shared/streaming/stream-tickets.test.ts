// Stream tickets over an in-memory store: random, stored only as a hash, and redeemed only for their own turn
// before they expire; every refusal reads the same.
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { MemoryStreamTickets } from '../../test/support/in-memory-ports.js';
import { UnauthenticatedError } from '../errors.js';
import { hashStreamTicket, issueStreamTicket, redeemStreamTicket } from './stream-tickets.js';

const turn = { userId: 'user_001', sessionId: randomUUID(), chatMessageId: randomUUID() };
const issuedAt = new Date('2026-11-22T10:00:00.000Z');
const at = (seconds: number) => new Date(issuedAt.getTime() + seconds * 1000);

describe('stream tickets', () => {
  it('are 256 random bits in base64url, a new one each time, and only their SHA-256 is stored', async () => {
    const store = new MemoryStreamTickets();
    const one = await issueStreamTicket(store, turn, { ttlSeconds: 900, now: issuedAt });
    const two = await issueStreamTicket(store, turn, { ttlSeconds: 900, now: issuedAt });
    expect(one.ticket).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(two.ticket).not.toBe(one.ticket);
    expect(one.expiresAt).toBe('2026-11-22T10:15:00.000Z');
    expect([...store.grants.keys()]).toEqual([
      `${turn.sessionId}/${hashStreamTicket(one.ticket)}`,
      `${turn.sessionId}/${hashStreamTicket(two.ticket)}`,
    ]);
    expect(JSON.stringify([...store.grants])).not.toContain(one.ticket);
  });

  it('give the caller they were issued to, for exactly their turn, until they expire', async () => {
    const store = new MemoryStreamTickets();
    const { ticket } = await issueStreamTicket(store, turn, { ttlSeconds: 900, now: issuedAt });
    await expect(redeemStreamTicket(store, ticket, turn, at(899))).resolves.toEqual({
      userId: 'user_001',
      identityProvider: 'stream-ticket',
    });

    const refusals = [
      redeemStreamTicket(store, ticket, turn, at(900)),
      redeemStreamTicket(store, ticket, { ...turn, chatMessageId: randomUUID() }, at(1)),
      redeemStreamTicket(store, ticket, { ...turn, sessionId: randomUUID() }, at(1)),
      redeemStreamTicket(
        store,
        ticket.replace(/^./, (c) => (c === 'A' ? 'B' : 'A')),
        turn,
        at(1),
      ),
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
