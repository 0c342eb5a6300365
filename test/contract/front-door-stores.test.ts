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
  it("keeps the first claim of a session's chatMessageId, and gives it back to every later claim", async () => {
    const store = createCosmosPostedMessageStore(database.container(SESSIONS_CONTAINER));
    const first: PostedMessage = {
      userId: 'user_001',
      sessionId: randomUUID(),
      chatMessageId: randomUUID(),
      textSha256: hash('hello'),
      postedAt: '2026-11-22T10:00:00.000Z',
    };
    expect(await store.claim(first)).toEqual(first);
    const again = { ...first, textSha256: hash('other'), postedAt: '2026-11-22T10:05:00.000Z' };
    expect(await store.claim(again)).toEqual(first);
    // Concurrent claims of a new key agree on one winner.
    const key = { ...first, chatMessageId: randomUUID() };
    const results = await Promise.all(
      ['a', 'b', 'c'].map((text, i) =>
        store.claim({ ...key, textSha256: hash(text), postedAt: `2026-11-22T10:0${i}:00.000Z` }),
      ),
    );
    expect(new Set(results.map((result) => result.textSha256)).size).toBe(1);

    const { resource } = await database
      .container(SESSIONS_CONTAINER)
      .item(`posted.${first.sessionId}.${first.chatMessageId}`, 'user_001')
      .read();
    expect(resource).toMatchObject({ kind: 'posted-message', ...first });
  });

  it('keeps the same chatMessageId in other sessions and of other users apart', async () => {
    const store = createCosmosPostedMessageStore(database.container(SESSIONS_CONTAINER));
    const chatMessageId = randomUUID();
    const base = { chatMessageId, postedAt: '2026-11-22T10:00:00.000Z' };
    const mine = { ...base, userId: 'user_001', sessionId: randomUUID(), textSha256: hash('mine') };
    const other = { ...base, userId: 'user_001', sessionId: randomUUID(), textSha256: hash('other') };
    const bobs = { ...base, userId: 'user_002', sessionId: randomUUID(), textSha256: hash('bob') };
    for (const message of [mine, other, bobs]) expect(await store.claim(message)).toEqual(message);
  });

  it("keeps what a message replaces and its use_memory choice, and finds it in the caller's session only", async () => {
    const store = createCosmosPostedMessageStore(database.container(SESSIONS_CONTAINER));
    const edit: PostedMessage = {
      userId: 'user_001',
      sessionId: randomUUID(),
      chatMessageId: randomUUID(),
      textSha256: hash('edited'),
      postedAt: '2026-11-22T10:00:00.000Z',
      fork: { replaces: randomUUID(), origin: 'edit' },
      useMemory: false,
    };
    expect(await store.claim(edit)).toEqual(edit);
    // A later claim without them gets the first back, with them: the front door compares the fork too.
    const { fork: _fork, useMemory: _useMemory, ...plain } = edit;
    expect(await store.claim(plain)).toEqual(edit);
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
