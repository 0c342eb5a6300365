// Contract tests of the front door's Cosmos DB stores against the local Cosmos DB with the real @azure/cosmos
// client: posted messages (the first claim of a session's chatMessageId wins, others read it back, sessions and
// users stay apart, one request with the session's read) and stream tickets (by hash, in their turn's record).
import { randomUUID } from 'node:crypto';
import type { CosmosClient, Database } from '@azure/cosmos';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createLocalCosmosClient,
  provisionCosmos,
  startLocalCosmos,
  type LocalCosmos,
} from '../../local/cosmos/local-cosmos.js';
import {
  createCosmosPostedMessageStore,
  createCosmosStreamTicketStore,
} from '../../shared/chat/adapters/cosmos-posted-message-store.js';
import { createCosmosSessionStore } from '../../shared/chat/adapters/cosmos-session-store.js';
import { SESSIONS_CONTAINER } from '../../shared/chat/contracts/documents.js';
import type { PostedMessage } from '../../shared/conversation/posted-message-store.js';
import { COSMOS_DATABASE, cosmosContainers } from '../../shared/app/cosmos-containers.js';
import {
  hashStreamTicket,
  newStreamTicket,
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
  // A claim gives back the caller's session it read in the same batch (the conversation's model and shape).
  const recorded = (posted: PostedMessage) => ({
    kind: 'recorded',
    posted,
    session: expect.objectContaining({ sessionId: posted.sessionId, userId: posted.userId }),
  });

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

describe('Cosmos DB session store, a client-chosen id', () => {
  it('makes the session with the shape its first claim gives, and keeps it for later claims', async () => {
    const store = createCosmosSessionStore(database.container(SESSIONS_CONTAINER));
    const id = randomUUID().replaceAll('-', '').slice(0, 16);
    const shape = { model: 'gpt-test', memory: 'read' as const, temporary: true as const };
    const made = await store.claim('user_001', id, shape);
    expect(made).toMatchObject({ sessionId: id, userId: 'user_001', ...shape });
    // A later claim (another shape) finds the session as it was made; another user gets none.
    expect(await store.claim('user_001', id, { model: 'other' })).toMatchObject(shape);
    expect(await store.find('user_001', id)).toMatchObject(shape);
    expect(await store.claim('user_002', id, shape)).toBeUndefined();
    // A temporary session expires by itself, as one POST /api/session/start makes.
    const { resource } = await database
      .container(SESSIONS_CONTAINER)
      .item(id, 'user_001')
      .read<{ ttl?: number }>();
    expect(resource?.ttl).toBeGreaterThan(0);
  });
});

describe('Cosmos DB stream-ticket store', () => {
  it("finds a ticket by its hash in its turn's record only, keeping no ticket and a bounded few", async () => {
    const container = database.container(SESSIONS_CONTAINER);
    const posted = createCosmosPostedMessageStore(container);
    const tickets = createCosmosStreamTicketStore(container);
    const sessionId = (await createCosmosSessionStore(container).create('user_001')).sessionId;
    const turn = { userId: 'user_001', sessionId, chatMessageId: randomUUID() };
    const now = new Date('2026-11-22T10:00:00.000Z');
    const message = { ...turn, textSha256: hash('hello'), postedAt: now.toISOString() };
    const first = newStreamTicket('user_001', { ttlSeconds: 900, now });
    await posted.claim(message, first);
    expect(await redeemStreamTicket(tickets, first.ticket, turn, now)).toMatchObject({ userId: 'user_001' });
    await expect(
      redeemStreamTicket(tickets, first.ticket, turn, new Date('2026-11-22T10:15:00.000Z')),
    ).rejects.toThrow();
    expect(await tickets.find({ ...turn, chatMessageId: randomUUID() }, first.sha256)).toBeUndefined();
    expect(await tickets.find({ ...turn, userId: 'user_002' }, first.sha256)).toBeUndefined();

    // A re-post's ticket is kept beside the earlier ones; past eight, a re-post's ticket is the only one kept.
    const reposts = [];
    for (let i = 0; i < 8; i += 1) {
      const ticket = newStreamTicket('user_001', { ttlSeconds: 900, now });
      expect(await posted.claim(message, ticket)).toMatchObject({ kind: 'recorded', posted: message });
      reposts.push(ticket);
    }
    const valid = async (t: { ticket: string }) =>
      redeemStreamTicket(tickets, t.ticket, turn, now).then(
        () => true,
        () => false,
      );
    expect(await Promise.all([first, ...reposts].map(valid))).toEqual([
      ...Array<boolean>(8).fill(false),
      true,
    ]);

    const { resource } = await container.item(`posted.${sessionId}.${turn.chatMessageId}`, 'user_001').read();
    expect(JSON.stringify(resource)).not.toContain(first.ticket);
    expect(resource).toMatchObject({
      streamTickets: [{ sha256: reposts[7]?.sha256, expiresAt: first.expiresAt }],
    });
  });
});
