// Contract test: the real @azure/cosmos client sees the request units the local Cosmos DB server charges, per
// request and per batch operation, and the server's stats add up the same units.
import type { Container, CosmosClient } from '@azure/cosmos';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import {
  createLocalCosmosClient,
  provisionCosmos,
  startLocalCosmos,
  type LocalCosmos,
} from '../../local/cosmos/local-cosmos.js';
import { readCharge, replaceCharge, writeCharge } from '../../local/cosmos/request-charge.js';

const DATABASE = 'charges';
const CONTAINER = 'charged';

let local: LocalCosmos;
let client: CosmosClient;
let container: Container;

beforeAll(async () => {
  local = await startLocalCosmos();
  client = createLocalCosmosClient(local);
  await provisionCosmos(client, DATABASE, [
    { id: CONTAINER, partitionKeyPaths: ['/pk'], purpose: 'request charges (test only)' },
  ]);
  container = client.database(DATABASE).container(CONTAINER);
});

afterAll(async () => {
  client.dispose();
  await local.stop();
});

/** An item of about `kb` KB as JSON. */
function item(id: string, kb: number) {
  return { id, pk: 'p', text: 'x'.repeat(Math.max(0, kb * 1024 - 40)) };
}

describe('local Cosmos DB request charges', () => {
  it('answers each request its charge, which the SDK reports and the stats add up', async () => {
    local.resetStats();
    const created = await container.items.create(item('small', 1));
    const big = await container.items.create(item('big', 64));
    const read = await container.item('big', 'p').read();
    const replaced = await container.item('small', 'p').replace(item('small', 1));
    const patched = await container.item('small', 'p').patch([{ op: 'set', path: '/n', value: 1 }]);
    const query = await container.items
      .query({ query: 'SELECT * FROM c WHERE c.id = @id', parameters: [{ name: '@id', value: 'small' }] })
      .fetchAll();

    expect(created.requestCharge).toBeCloseTo(writeCharge(1024), 1);
    expect(big.requestCharge).toBeGreaterThan(20);
    expect(read.requestCharge).toBeGreaterThan(4);
    expect(read.requestCharge).toBeCloseTo(readCharge(64 * 1024), 0);
    expect(replaced.requestCharge).toBeCloseTo(replaceCharge(1024), 1);
    expect(patched.requestCharge).toBeGreaterThan(created.requestCharge);
    expect(query.requestCharge).toBeGreaterThan(2);

    const charges = [created, big, read, replaced, patched].map((response) => response.requestCharge);
    const stats = local.stats();
    // The query may take more than one request (a plan first); every request's charge is in the total.
    expect(stats.requestUnits).toBeCloseTo(charges.reduce((sum, c) => sum + c, 0) + query.requestCharge, 1);
    const byContainer = Object.values(stats.byContainer).reduce((sum, entry) => sum + entry.requestUnits, 0);
    expect(byContainer).toBeCloseTo(stats.requestUnits, 6);
    expect(stats.byContainer[`${CONTAINER} item.create`]?.requestUnits).toBeCloseTo(
      created.requestCharge + big.requestCharge,
      6,
    );
  });

  it('charges a batch the sum of its operations, each reported on its own result', async () => {
    local.resetStats();
    const response = await container.items.batch(
      [
        { operationType: 'Create', partitionKey: 'p', resourceBody: item('b1', 1) },
        { operationType: 'Create', partitionKey: 'p', resourceBody: item('b2', 2) },
        { operationType: 'Read', partitionKey: 'p', id: 'b1' },
      ],
      'p',
    );
    const results = response.result ?? [];
    expect(results.map((r) => r.statusCode)).toEqual([201, 201, 200]);
    const perOperation = results.map((r) => r.requestCharge);
    expect(perOperation[0]).toBeCloseTo(writeCharge(1024), 1);
    expect(perOperation[2]).toBeCloseTo(1, 1);
    const sum = perOperation.reduce((total, charge) => total + charge, 0);
    expect(local.stats().requestUnits).toBeCloseTo(sum, 1);
    expect(local.stats().byContainer[`${CONTAINER} item.batch`]?.requestUnits).toBeCloseTo(sum, 1);
  });
});
