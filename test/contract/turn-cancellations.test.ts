// Contract tests of what stopping a turn reads and writes in Cosmos DB, against the local Cosmos DB with the real
// @azure/cosmos client: the stop record (created once in the hot store, in the session's partition, the first time
// kept; another user's never counts) and the posted-message lookup the cancel endpoint proves ownership with.
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
import { HOT_CONVERSATIONS_CONTAINER, SESSIONS_CONTAINER } from '../../shared/chat/contracts/documents.js';
import type { PostedMessage } from '../../shared/conversation/posted-message-store.js';
import type { TurnRef } from '../../shared/conversation/messages.js';
import { createHotTurnCancellations } from '../../shared/chat/hot-turn-cancellations.js';
import { createCosmosHotStore } from '../../shared/conversation/adapters/cosmos-hot-store.js';
import { COSMOS_DATABASE, cosmosContainers } from '../../shared/app/cosmos-containers.js';

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

describe('Cosmos DB turn cancellations', () => {
  it('record a stop once, keep the first request, and answer for that turn only', async () => {
    const hot = database.container(HOT_CONVERSATIONS_CONTAINER);
    const store = createHotTurnCancellations(createCosmosHotStore(hot));
    const turn: TurnRef = { userId: 'user_001', sessionId: randomUUID(), chatMessageId: randomUUID() };
    expect(await store.isRequested(turn)).toBe(false);

    await store.request(turn, '2026-11-22T10:00:00.000Z');
    await Promise.all([
      store.request(turn, '2026-11-22T10:00:01.000Z'),
      store.request(turn, '2026-11-22T10:00:02.000Z'),
    ]);
    expect(await store.isRequested(turn)).toBe(true);
    const { resource } = await hot.item(`cancel.${turn.chatMessageId}`, turn.sessionId).read();
    expect(resource).toMatchObject({
      kind: 'turn-cancellation',
      ...turn,
      requestedAt: '2026-11-22T10:00:00.000Z',
    });

    // Another turn of the session, the same id in another session, and another user naming this turn: not stopped.
    expect(await store.isRequested({ ...turn, chatMessageId: randomUUID() })).toBe(false);
    expect(await store.isRequested({ ...turn, sessionId: randomUUID() })).toBe(false);
    expect(await store.isRequested({ ...turn, userId: 'user_002' })).toBe(false);
  });
});

describe('Cosmos DB posted-message lookup', () => {
  it("finds a message in its owner's session only", async () => {
    const sessions = database.container(SESSIONS_CONTAINER);
    const store = createCosmosPostedMessageStore(sessions);
    // A message is recorded only in a session of its poster's.
    const { sessionId } = await createCosmosSessionStore(sessions).create('user_001');
    const posted: PostedMessage = {
      userId: 'user_001',
      sessionId,
      chatMessageId: randomUUID(),
      textSha256: 'a'.repeat(64),
      postedAt: '2026-11-22T10:00:00.000Z',
    };
    await store.claim(posted);
    expect(await store.find('user_001', posted.sessionId, posted.chatMessageId)).toEqual(posted);
    expect(await store.find('user_002', posted.sessionId, posted.chatMessageId)).toBeUndefined();
    expect(await store.find('user_001', randomUUID(), posted.chatMessageId)).toBeUndefined();
    expect(await store.find('user_001', posted.sessionId, randomUUID())).toBeUndefined();
  });
});
