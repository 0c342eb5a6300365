// The hot store contract over the in-memory twin and over the Cosmos DB adapter (the local Cosmos DB server and the
// real @azure/cosmos client), and what only the Cosmos DB adapter promises: a slid window costs a short patch, and a
// list is one query in the session's partition.
import { randomUUID } from 'node:crypto';
import type { CosmosClient } from '@azure/cosmos';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  createLocalCosmosClient,
  provisionCosmos,
  startLocalCosmos,
  type LocalCosmos,
} from '../../local/cosmos/local-cosmos.js';
import { HOT_CONVERSATIONS_CONTAINER } from '../../shared/chat/contracts/documents.js';
import { createCosmosHotStore } from '../../shared/conversation/adapters/cosmos-hot-store.js';
import { COSMOS_DATABASE, cosmosContainers } from '../../shared/app/cosmos-containers.js';
import { MemoryHotStore } from '../support/in-memory-hot-store.js';
import { describeHotStoreContract } from './hot-store-contract.js';

describeHotStoreContract('in-memory twin', ({ ttlSeconds }) => {
  let now = Date.UTC(2026, 0, 1);
  const store = new MemoryHotStore({ now: () => now, ttlSeconds });
  return Promise.resolve({
    store,
    advance: (seconds) => {
      now += seconds * 1000;
      return Promise.resolve();
    },
    close: () => Promise.resolve(),
  });
});

/** The local Cosmos DB with its hot container's TTL set to `ttlSeconds`. */
async function openCosmos(ttlSeconds: number): Promise<{ local: LocalCosmos; client: CosmosClient }> {
  // Expiry is judged by Date.now(), read on each call: the expiry case moves a faked Date instead of sleeping.
  const local = await startLocalCosmos({ now: () => Date.now() });
  const client = createLocalCosmosClient(local);
  const hot = cosmosContainers
    .filter((spec) => spec.id === HOT_CONVERSATIONS_CONTAINER)
    .map((spec) => ({ ...spec, defaultTtlSeconds: ttlSeconds }));
  await provisionCosmos(client, COSMOS_DATABASE, hot);
  return { local, client };
}

describeHotStoreContract('Cosmos DB', async ({ ttlSeconds }) => {
  const { local, client } = await openCosmos(ttlSeconds);
  const container = client.database(COSMOS_DATABASE).container(HOT_CONVERSATIONS_CONTAINER);
  let faked = false;
  return {
    store: createCosmosHotStore(container),
    other: createCosmosHotStore(container),
    advance: (seconds) => {
      // The server stamps each write's `_ts` from Date.now() too, so a faked Date moves both ends of a lifetime.
      if (!faked) vi.useFakeTimers({ toFake: ['Date'], now: Date.now() });
      faked = true;
      vi.setSystemTime(Date.now() + seconds * 1000);
      return Promise.resolve();
    },
    close: async () => {
      vi.useRealTimers();
      client.dispose();
      await local.stop();
    },
  };
});

describe('Cosmos DB hot store', () => {
  let local: LocalCosmos;
  let client: CosmosClient;
  beforeAll(async () => {
    ({ local, client } = await openCosmos(3600));
  }, 60_000);
  afterAll(async () => {
    client?.dispose();
    await local?.stop();
  });
  const container = () => client.database(COSMOS_DATABASE).container(HOT_CONVERSATIONS_CONTAINER);

  it('sends a slid window as a short patch: bytes for the new items, not the whole list', async () => {
    const store = createCosmosHotStore(container());
    const sessionId = randomUUID();
    const item = (i: number) => ({ id: `m${i}`, text: `message ${i} `.repeat(40) });
    const before = { items: Array.from({ length: 40 }, (_, i) => item(i)), count: 40 };
    const created = await store.write(sessionId, 'window', before, { kind: 'absent' });
    if (created.kind !== 'written') throw new Error('not written');
    const next = { items: [...before.items.slice(2), item(40), item(41)], count: 42 };
    local.resetStats();
    const written = await store.write(sessionId, 'window', next, {
      kind: 'version',
      version: created.version,
      previous: before,
    });
    const stats = local.stats();
    expect(written.kind).toBe('written');
    expect(stats.byOperation).toEqual({ 'item.patch': 1 });
    const whole = Buffer.byteLength(JSON.stringify(next));
    const added = Buffer.byteLength(JSON.stringify([item(40), item(41)]));
    expect(stats.requestBytes + stats.responseBytes).toBeLessThan(added * 3);
    expect(whole).toBeGreaterThan(added * 10);
    expect((await createCosmosHotStore(container()).read(sessionId, 'window'))?.value).toStrictEqual(next);
  });

  it('lists with one single-partition query, and reads an unchanged entry without its body', async () => {
    const store = createCosmosHotStore(container());
    const sessionId = randomUUID();
    for (const key of ['b', 'a', 'c.1']) await store.write(sessionId, key, { key }, { kind: 'any' });
    local.resetStats();
    expect((await store.list(sessionId, '')).map((entry) => entry.key)).toEqual(['a', 'b', 'c.1']);
    // One query in the partition, and the query plan the SDK asks for beside every query (its answer unused).
    expect(local.stats().byOperation).toEqual({ 'item.query': 2 });
    local.resetStats();
    expect((await store.read(sessionId, 'a'))?.value).toEqual({ key: 'a' });
    const { responseBytes, requests } = local.stats();
    expect(requests).toBe(1);
    expect(responseBytes).toBe(0);
  });
});
