// The Cosmos DB share store against the local Cosmos DB with the real @azure/cosmos client: a long snapshot in many
// chunks read back in order, TTLs on a share with an expiry, links per owner and conversation, revoking in full,
// and ids of another form refused before any request.
import { randomBytes, randomUUID } from 'node:crypto';
import type { CosmosClient } from '@azure/cosmos';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createLocalCosmosClient,
  provisionCosmos,
  startLocalCosmos,
  type LocalCosmos,
} from '../../local/cosmos/local-cosmos.js';
import { COSMOS_DATABASE, cosmosContainers } from '../../shared/app/cosmos-containers.js';
import { UnsafeItemIdError } from '../../shared/cosmos/adapters/guarded-item.js';
import { createCosmosShareStore } from '../../shared/sharing/adapters/cosmos-share-store.js';
import {
  SHARE_LINKS_CONTAINER,
  SHARES_CONTAINER,
  type SharedMessage,
  type ShareFields,
} from '../../shared/sharing/contracts.js';
import type { ShareStore } from '../../shared/sharing/share-store.js';
import { chunkMessages } from '../../shared/sharing/snapshot.js';

let local: LocalCosmos;
let client: CosmosClient;
let store: ShareStore;

beforeAll(async () => {
  local = await startLocalCosmos();
  client = createLocalCosmosClient(local);
  await provisionCosmos(client, COSMOS_DATABASE, cosmosContainers);
  const database = client.database(COSMOS_DATABASE);
  store = createCosmosShareStore({
    shares: database.container(SHARES_CONTAINER),
    links: database.container(SHARE_LINKS_CONTAINER),
  });
}, 60_000);

afterAll(async () => {
  client?.dispose();
  await local?.stop();
});

const newShareId = () => randomBytes(16).toString('base64url');

function fields(userId: string, sessionId: string, overrides: Partial<ShareFields> = {}): ShareFields {
  return {
    shareId: newShareId(),
    userId,
    sessionId,
    title: 'A trip',
    createdAt: new Date().toISOString(),
    expiresAt: null,
    messageCount: 0,
    includesToolCalls: false,
    ...overrides,
  };
}

describe('the Cosmos DB share store', () => {
  it('stores a 10,000-message snapshot in chunks and reads it back in order', async () => {
    const messages: SharedMessage[] = Array.from({ length: 10_000 }, (_, index) => ({
      role: index % 2 === 0 ? 'user' : 'assistant',
      content: `message ${index}: ${'words '.repeat(20)}`,
      timestamp: new Date(Date.UTC(2026, 10, 22, 10, 0, 0, index)).toISOString(),
    }));
    const chunks = chunkMessages(messages);
    expect(chunks.length).toBeGreaterThan(4);
    const share = fields('user_001', randomUUID(), { messageCount: messages.length });
    await store.create({ fields: share, chunks });
    const head = await store.head(share.shareId);
    expect(head).toMatchObject({ shareId: share.shareId, chunkCount: chunks.length, messageCount: 10_000 });
    expect(await store.messages(head!)).toEqual(messages);
  }, 120_000);

  it('gives the items of a share with an expiry a TTL past it', async () => {
    const expiresAt = new Date(Date.now() + 3_600_000).toISOString();
    const share = fields('user_001', randomUUID(), { expiresAt });
    await store.create({ fields: share, chunks: [[]] });
    const { resources } = await client
      .database(COSMOS_DATABASE)
      .container(SHARES_CONTAINER)
      .items.query<{ ttl?: number }>('SELECT c.ttl FROM c', { partitionKey: share.shareId })
      .fetchAll();
    expect(resources).toHaveLength(2);
    for (const { ttl } of resources) expect(ttl).toBeGreaterThanOrEqual(3_600);
  });

  it("lists an owner's links by conversation, and revokes a share in full", async () => {
    const userId = `user_${randomUUID().slice(0, 8)}`;
    const sessionId = randomUUID();
    const first = fields(userId, sessionId, { createdAt: '2026-11-22T10:00:00.000Z' });
    const second = fields(userId, sessionId, { createdAt: '2026-11-22T11:00:00.000Z' });
    const other = fields(userId, randomUUID());
    for (const share of [first, second, other]) await store.create({ fields: share, chunks: [[]] });

    expect((await store.links(userId, { sessionId, limit: 10 })).map((l) => l.shareId)).toEqual([
      second.shareId,
      first.shareId,
    ]);
    expect(await store.links(userId, { limit: 10 })).toHaveLength(3);
    expect(await store.link('user_999', first.shareId)).toBeUndefined();

    await store.revoke(userId, first.shareId);
    expect(await store.head(first.shareId)).toBeUndefined();
    expect(await store.link(userId, first.shareId)).toBeUndefined();
    const { resources } = await client
      .database(COSMOS_DATABASE)
      .container(SHARES_CONTAINER)
      .items.query('SELECT c.id FROM c', { partitionKey: first.shareId })
      .fetchAll();
    expect(resources).toEqual([]);
    // Revoking again is harmless.
    await store.revoke(userId, first.shareId);
  });

  it('refuses an id of another form before sending anything', async () => {
    await expect(store.head('..')).rejects.toBeInstanceOf(UnsafeItemIdError);
    await expect(store.revoke('user_001', 'AAAAAAAAAAAAAAAAAAAAAB')).rejects.toBeInstanceOf(
      UnsafeItemIdError,
    );
  });
});
