// Transactional batches on the local Cosmos DB server with the real @azure/cosmos client: Patch among the
// operations, all or nothing (a failure anywhere leaves every document as it was), and one request per batch.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import type { Container, CosmosClient, OperationInput } from '@azure/cosmos';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { guardedItem } from '../../shared/cosmos/adapters/guarded-item.js';

import {
  createLocalCosmosClient,
  provisionCosmos,
  startLocalCosmos,
  type LocalCosmos,
} from './local-cosmos.js';

const DATABASE = 'batches';
let dir: string;
let local: LocalCosmos;
let client: CosmosClient;
let flat: Container;
let nested: Container;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'atomic-batch-'));
  local = await startLocalCosmos({ dataFile: join(dir, 'cosmos.json') });
  client = createLocalCosmosClient(local);
  await provisionCosmos(client, DATABASE, [
    { id: 'flat', partitionKeyPaths: ['/userId'], defaultTtlSeconds: -1, purpose: 'test' },
    { id: 'nested', partitionKeyPaths: ['/userId', '/sessionId'], defaultTtlSeconds: -1, purpose: 'test' },
  ]);
  flat = client.database(DATABASE).container('flat');
  nested = client.database(DATABASE).container('nested');
}, 60_000);

afterAll(async () => {
  client?.dispose();
  await local?.stop();
  await rm(dir, { recursive: true, force: true });
});

async function read(container: Container, id: string, key: string | string[]) {
  const { resource } = await guardedItem(container, id, key).read<Record<string, unknown>>();
  return resource;
}

describe('a transactional batch on the local Cosmos DB server', () => {
  it('creates and patches in one request, a patch seeing what an earlier operation of the batch wrote', async () => {
    await flat.items.create({ id: 'counter-a', userId: 'u1', calls: 1, tokens: { input: 10 } });
    local.resetStats();
    const operations: OperationInput[] = [
      { operationType: 'Create', resourceBody: { id: 'record-1', userId: 'u1', tokens: 5 } },
      {
        operationType: 'Patch',
        id: 'counter-a',
        resourceBody: {
          operations: [
            { op: 'incr', path: '/calls', value: 1 },
            { op: 'incr', path: '/tokens/input', value: 5 },
          ],
        },
      },
      {
        operationType: 'Patch',
        id: 'record-1',
        resourceBody: [{ op: 'set', path: '/counted', value: true }],
      },
    ];
    const response = await flat.items.batch(operations, 'u1');
    expect(response.code).toBe(200);
    expect(response.result?.map((result) => result.statusCode)).toEqual([201, 200, 200]);
    expect(local.stats().byOperation).toEqual({ 'item.batch': 1 });
    expect(await read(flat, 'counter-a', 'u1')).toMatchObject({ calls: 2, tokens: { input: 15 } });
    expect(await read(flat, 'record-1', 'u1')).toMatchObject({ tokens: 5, counted: true });
  });

  it('applies nothing when an operation fails: 207, its status, 424 for the others', async () => {
    await flat.items.create({ id: 'counter-b', userId: 'u1', calls: 1 });
    const before = await read(flat, 'counter-b', 'u1');
    const operations: OperationInput[] = [
      { operationType: 'Create', resourceBody: { id: 'record-2', userId: 'u1' } },
      { operationType: 'Patch', id: 'counter-b', resourceBody: [{ op: 'incr', path: '/calls', value: 1 }] },
      // Missing: the batch fails at its last operation, after the first two ran on the staged copy.
      {
        operationType: 'Patch',
        id: 'no-such-counter',
        resourceBody: [{ op: 'incr', path: '/calls', value: 1 }],
      },
    ];
    const response = await flat.items.batch(operations, 'u1');
    expect(response.code).toBe(207);
    expect(response.result?.map((result) => result.statusCode)).toEqual([424, 424, 404]);
    expect(await read(flat, 'record-2', 'u1')).toBeUndefined();
    expect(await read(flat, 'counter-b', 'u1')).toEqual(before);
  });

  it('fails on a create conflict before anything is counted (a call recorded twice)', async () => {
    await flat.items.create({ id: 'counter-c', userId: 'u1', calls: 0 });
    const once: OperationInput[] = [
      { operationType: 'Create', resourceBody: { id: 'record-3', userId: 'u1' } },
      { operationType: 'Patch', id: 'counter-c', resourceBody: [{ op: 'incr', path: '/calls', value: 1 }] },
    ];
    expect((await flat.items.batch(structuredClone(once), 'u1')).code).toBe(200);
    // Asked for no documents back (return=minimal), a batch still answers each operation's status.
    const again = await flat.items.batch(structuredClone(once), 'u1', {
      contentResponseOnWriteEnabled: false,
    });
    expect(again.code).toBe(207);
    expect(again.result?.map((result) => result.statusCode)).toEqual([409, 424]);
    expect(await read(flat, 'counter-c', 'u1')).toMatchObject({ calls: 1 });
  });

  it("evaluates a patch's condition as Cosmos DB does, camel-case properties included", async () => {
    await flat.items.create({ id: 'counter-d', userId: 'u1', kind: 'counter', messageCount: 3 });
    const patch = (condition: string): OperationInput[] => [
      { operationType: 'Create', resourceBody: { id: `record-${condition.length}`, userId: 'u1' } },
      {
        operationType: 'Patch',
        id: 'counter-d',
        resourceBody: { operations: [{ op: 'incr', path: '/messageCount', value: 1 }], condition },
      },
    ];
    const unmet = await flat.items.batch(patch("FROM c WHERE c.kind = 'record'"), 'u1');
    expect(unmet.result?.map((result) => result.statusCode)).toEqual([424, 412]);
    const met = await flat.items.batch(patch('FROM c WHERE c.messageCount <= 3'), 'u1');
    expect(met.result?.map((result) => result.statusCode)).toEqual([201, 200]);
    expect(await read(flat, 'counter-d', 'u1')).toMatchObject({ messageCount: 4 });
  });

  it('stages a delete, an upsert and a replace like the rest: a later failure undoes them', async () => {
    await flat.items.create({ id: 'keep-1', userId: 'u1', v: 1 });
    await flat.items.create({ id: 'keep-2', userId: 'u1', v: 1 });
    const response = await flat.items.batch(
      [
        { operationType: 'Delete', id: 'keep-1' },
        { operationType: 'Upsert', resourceBody: { id: 'keep-2', userId: 'u1', v: 2 } },
        { operationType: 'Replace', id: 'keep-1', resourceBody: { id: 'keep-1', userId: 'u1', v: 3 } },
      ],
      'u1',
    );
    // The replace finds the document the batch deleted gone.
    expect(response.result?.map((result) => result.statusCode)).toEqual([424, 424, 404]);
    expect(await read(flat, 'keep-1', 'u1')).toMatchObject({ v: 1 });
    expect(await read(flat, 'keep-2', 'u1')).toMatchObject({ v: 1 });
  });

  it('runs in a hierarchical partition, and keeps its writes across a restart', async () => {
    const key = ['u2', 's1'];
    await nested.items.create({ id: 'digest', userId: 'u2', sessionId: 's1', n: 0 });
    await nested.items.create({ id: 'digest', userId: 'u2', sessionId: 's2', n: 0 });
    const response = await nested.items.batch(
      [
        { operationType: 'Create', resourceBody: { id: 'm1', userId: 'u2', sessionId: 's1' } },
        { operationType: 'Patch', id: 'digest', resourceBody: [{ op: 'incr', path: '/n', value: 1 }] },
      ],
      key,
    );
    expect(response.result?.map((result) => result.statusCode)).toEqual([201, 200]);
    expect(await read(nested, 'digest', key)).toMatchObject({ n: 1 });
    expect(await read(nested, 'digest', ['u2', 's2'])).toMatchObject({ n: 0 });

    client.dispose();
    await local.stop();
    local = await startLocalCosmos({ dataFile: join(dir, 'cosmos.json') });
    client = createLocalCosmosClient(local);
    nested = client.database(DATABASE).container('nested');
    expect(await read(nested, 'digest', key)).toMatchObject({ n: 1 });
    expect(await read(nested, 'm1', key)).toMatchObject({ id: 'm1' });
  });
});
