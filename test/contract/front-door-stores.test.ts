// Contract tests of the front door's Cosmos DB stores against the local Cosmos DB with the real @azure/cosmos
// client: posted messages (the first claim of a session's chatMessageId wins, others read it back, sessions and
// users stay apart) and stream tickets (found by hash in their session, with a ttl so Cosmos DB removes them).
import { randomUUID } from 'node:crypto';
import type { CosmosClient, Database } from '@azure/cosmos';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createLocalCosmosClient,
  provisionCosmos,
  startLocalCosmos,
  type LocalCosmos,
} from '../../local/cosmos/local-cosmos.js';
import { createCosmosPostedMessageStore } from '../../shared/chat/adapters/cosmos-posted-message-store.js';
import { createCosmosSessionStore } from '../../shared/chat/adapters/cosmos-session-store.js';
import { SESSIONS_CONTAINER } from '../../shared/chat/contracts/documents.js';
import type { PostedMessage } from '../../shared/conversation/posted-message-store.js';
import { COSMOS_DATABASE, cosmosContainers } from '../../shared/app/cosmos-containers.js';
import { createCosmosStreamTicketStore } from '../../shared/streaming/adapters/cosmos-stream-ticket-store.js';
import { TURN_EVENTS_CONTAINER } from '../../shared/streaming/contracts.js';
import {
  hashStreamTicket,
  issueStreamTicket,
  redeemStreamTicket,
} from '../../shared/streaming/stream-tickets.js';

let local: LocalCosmos;
let client: CosmosClient;
let database: Database;

beforeAll(async () => {
  local = await startLocalCosmos({ flushDelayMs: 10 });
  client = createLocalCosmosClient(local);
  await provisionCosmos(client, COSMOS_DATABASE, cosmosContainers);
  database = client.database(COSMOS_DATABASE);
});
afterAll(async () => {
  client?.dispose();
  await local?.stop();
});

const hash = (text: string) => hashStreamTicket(text); // any 64-hex digest will do for a text hash

describe('Cosmos DB posted-message store', () => {
  const sessionsContainer = () => database.container(SESSIONS_CONTAINER);
  /** A new session of the user, as POST /api/session/start makes it. */
  const sessionOf = async (userId: string) =>
    (await createCosmosSessionStore(sessionsContainer()).create(userId)).sessionId;
  const recorded = (posted: PostedMessage) => ({ kind: 'recorded', posted });

  it("keeps the first claim of a session's chatMessageId, and gives it back to every later claim", async () => {
    const store = createCosmosPostedMessageStore(sessionsContainer());
    const first: PostedMessage = {
      userId: 'user_001',
      sessionId: await sessionOf('user_001'),
      chatMessageId: randomUUID(),
      textSha256: hash('hello'),
      postedAt: '2026-11-22T10:00:00.000Z',
    };
    local.resetStats();
    expect(await store.claim(first)).toEqual(recorded(first));
    // The session's read and the record's create are one request.
    expect(local.stats().requests).toBe(1);
    const again = { ...first, textSha256: hash('other'), postedAt: '2026-11-22T10:05:00.000Z' };
    expect(await store.claim(again)).toEqual(recorded(first));
    // Concurrent claims of a new key agree on one winner.
    const key = { ...first, chatMessageId: randomUUID() };
    const results = await Promise.all(
      ['a', 'b', 'c'].map((text, i) =>
        store.claim({ ...key, textSha256: hash(text), postedAt: `2026-11-22T10:0${i}:00.000Z` }),
      ),
    );
    expect(
      new Set(results.map((result) => (result.kind === 'recorded' ? result.posted.textSha256 : result.kind)))
        .size,
    ).toBe(1);
    expect(results[0]?.kind).toBe('recorded');

    const { resource } = await sessionsContainer()
      .item(`posted.${first.sessionId}.${first.chatMessageId}`, 'user_001')
      .read();
    expect(resource).toMatchObject({ kind: 'posted-message', ...first });
  });

  it('keeps the same chatMessageId in other sessions and of other users apart', async () => {
    const store = createCosmosPostedMessageStore(sessionsContainer());
    const chatMessageId = randomUUID();
    const base = { chatMessageId, postedAt: '2026-11-22T10:00:00.000Z' };
    const mine = {
      ...base,
      userId: 'user_001',
      sessionId: await sessionOf('user_001'),
      textSha256: hash('mine'),
    };
    const other = {
      ...base,
      userId: 'user_001',
      sessionId: await sessionOf('user_001'),
      textSha256: hash('other'),
    };
    const bobs = {
      ...base,
      userId: 'user_002',
      sessionId: await sessionOf('user_002'),
      textSha256: hash('bob'),
    };
    for (const message of [mine, other, bobs]) expect(await store.claim(message)).toEqual(recorded(message));
  });

  it("writes nothing in a session the caller does not have, another user's or none", async () => {
    const store = createCosmosPostedMessageStore(sessionsContainer());
    const bobsSession = await sessionOf('user_002');
    for (const sessionId of [bobsSession, randomUUID()]) {
      const message: PostedMessage = {
        userId: 'user_001',
        sessionId,
        chatMessageId: randomUUID(),
        textSha256: hash('hello'),
        postedAt: '2026-11-22T10:00:00.000Z',
      };
      expect(await store.claim(message)).toEqual({ kind: 'no-session' });
      expect(await store.find('user_001', sessionId, message.chatMessageId)).toBeUndefined();
    }
    expect(await store.latest('user_002', bobsSession, 10)).toEqual([]);
  });

  it('keeps nothing of a message claimed in a session being deleted, a first post or a re-post', async () => {
    const store = createCosmosPostedMessageStore(sessionsContainer());
    const sessions = createCosmosSessionStore(sessionsContainer());
    const sessionId = await sessionOf('user_001');
    const earlier: PostedMessage = {
      userId: 'user_001',
      sessionId,
      chatMessageId: randomUUID(),
      textSha256: hash('earlier'),
      postedAt: '2026-11-22T10:00:00.000Z',
    };
    expect(await store.claim(earlier)).toEqual(recorded(earlier));
    expect(await sessions.markDeleting('user_001', sessionId)).toBe(true);
    const fresh = { ...earlier, chatMessageId: randomUUID() };
    expect(await store.claim(fresh)).toEqual({ kind: 'session-deleted' });
    expect(await store.find('user_001', sessionId, fresh.chatMessageId)).toBeUndefined();
    expect(await store.claim(earlier)).toEqual({ kind: 'session-deleted' });
  });

  it("keeps what a message replaces and its use_memory choice, and finds it in the caller's session only", async () => {
    const store = createCosmosPostedMessageStore(sessionsContainer());
    const edit: PostedMessage = {
      userId: 'user_001',
      sessionId: await sessionOf('user_001'),
      chatMessageId: randomUUID(),
      textSha256: hash('edited'),
      postedAt: '2026-11-22T10:00:00.000Z',
      fork: { replaces: randomUUID(), origin: 'edit' },
      useMemory: false,
    };
    expect(await store.claim(edit)).toEqual(recorded(edit));
    // A later claim without them gets the first back, with them: the front door compares the fork too.
    const { fork: _fork, useMemory: _useMemory, ...plain } = edit;
    expect(await store.claim(plain)).toEqual(recorded(edit));
    expect(await store.find('user_001', edit.sessionId, edit.chatMessageId)).toEqual(edit);
    expect(await store.find('user_002', edit.sessionId, edit.chatMessageId)).toBeUndefined();
    expect(await store.find('user_001', randomUUID(), edit.chatMessageId)).toBeUndefined();
    expect(await store.find('user_001', edit.sessionId, randomUUID())).toBeUndefined();
  });
});

describe('Cosmos DB stream-ticket store', () => {
  it('finds a ticket by its hash in its session only, and stores neither the ticket nor forever', async () => {
    const container = database.container(TURN_EVENTS_CONTAINER);
    const store = createCosmosStreamTicketStore(container, () => new Date('2026-11-22T10:00:00.000Z'));
    const turn = { userId: 'user_001', sessionId: randomUUID(), chatMessageId: randomUUID() };
    const now = new Date('2026-11-22T10:00:00.000Z');
    const { ticket, expiresAt } = await issueStreamTicket(store, turn, { ttlSeconds: 900, now });
    expect(await redeemStreamTicket(store, ticket, turn, now)).toMatchObject({ userId: 'user_001' });
    expect(await store.find(randomUUID(), hashStreamTicket(ticket))).toBeUndefined();

    const { resource } = await container.item(`ticket.${hashStreamTicket(ticket)}`, turn.sessionId).read();
    expect(resource).toMatchObject({
      kind: 'stream-ticket',
      sessionId: turn.sessionId,
      grant: { userId: 'user_001', chatMessageId: turn.chatMessageId },
      expiresAt,
      ttl: 900,
    });
    expect(JSON.stringify(resource)).not.toContain(ticket);
  });
});
