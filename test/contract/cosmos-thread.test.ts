// The local Cosmos DB server on its own worker thread, with the real @azure/cosmos client: it answers from there,
// its counters and diagnostics read synchronously across threads, and it answers as late as Azure would when asked.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import {
  createLocalCosmosClient,
  provisionCosmos,
  startLocalCosmos,
  type LocalCosmos,
} from '../../local/cosmos/local-cosmos.js';
import type { ContainerSpec } from '../../shared/cosmos/container-spec.js';

const schema: readonly ContainerSpec[] = [
  { id: 'items', partitionKeyPaths: ['/pk'], defaultTtlSeconds: -1, purpose: 'test only' },
];

describe('the local Cosmos DB server on a worker thread', () => {
  let local: LocalCosmos;

  beforeAll(async () => {
    local = await startLocalCosmos();
  });

  afterAll(async () => {
    await local?.stop();
  });

  it('runs off the caller thread, and counts what it served where the caller can read it at once', async () => {
    const client = createLocalCosmosClient(local);
    try {
      await provisionCosmos(client, 'thread', schema);
      local.resetStats();
      const items = client.database('thread').container('items');
      await items.items.create({ id: 'a', pk: 'p' });
      const { resource } = await items.item('a', 'p').read<{ id: string }>();
      expect(resource?.id).toBe('a');

      const diagnostics = local.diagnostics();
      expect(diagnostics.thread).toBe('worker');
      expect(diagnostics.eventLoop?.active).toBeGreaterThan(0);
      expect(diagnostics.latencyWaits).toBe(0);
      expect(diagnostics.connections).toBeGreaterThanOrEqual(1);
      const stats = local.stats();
      expect(stats.byOperation['item.create']).toBe(1);
      expect(stats.byOperation['item.read']).toBe(1);
      local.resetStats();
      expect(local.stats().requests).toBe(0);
    } finally {
      client.dispose();
    }
  });

  it('keeps the caller thread for a server given a clock of its own (a function cannot cross threads)', async () => {
    const inline = await startLocalCosmos({ now: () => Date.now() });
    try {
      expect(inline.diagnostics().thread).toBe('caller');
    } finally {
      await inline.stop();
    }
  });

  it('keeps the caller thread when asked (LOCAL_COSMOS_THREAD=caller)', async () => {
    const inline = await startLocalCosmos({ thread: 'caller' });
    try {
      expect(inline.diagnostics().thread).toBe('caller');
    } finally {
      await inline.stop();
    }
  });
});

describe('the local Cosmos DB server with the Azure latency model', () => {
  it('answers every kind of request, each after its own wait', async () => {
    const local = await startLocalCosmos({
      latency: { seed: 7, taskHub: 'azure-storage', maxQueuePollingIntervalMs: 1000 },
    });
    const client = createLocalCosmosClient(local);
    try {
      await provisionCosmos(client, 'latency', schema);
      local.resetStats();
      const items = client.database('latency').container('items');
      await items.items.create({ id: 'a', pk: 'p', n: 1 });
      await items.item('a', 'p').patch([{ op: 'set', path: '/n', value: 2 }]);
      const { resources } = await items.items
        .query<{ n: number }>('SELECT c.n FROM c WHERE c.pk = "p"', { partitionKey: 'p' })
        .fetchAll();
      expect(resources).toEqual([{ n: 2 }]);
      await items.item('a', 'p').delete();
      expect((await items.item('a', 'p').read()).statusCode).toBe(404);
      const { requests } = local.stats();
      expect(requests).toBeGreaterThanOrEqual(5);
      expect(local.diagnostics().latencyWaits).toBeGreaterThanOrEqual(requests);
    } finally {
      client.dispose();
      await local.stop();
    }
  });
});
