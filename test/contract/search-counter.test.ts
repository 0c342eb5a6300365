// Contract test of the Cosmos DB search counter against the local Cosmos DB with the real @azure/cosmos client:
// parallel searches from two instances count up to the limit and no further; minutes, users and the message
// counter beside it in the same container never share a count.
import { randomUUID } from 'node:crypto';
import type { CosmosClient } from '@azure/cosmos';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createLocalCosmosClient,
  provisionCosmos,
  startLocalCosmos,
  type LocalCosmos,
} from '../../local/cosmos/local-cosmos.js';
import { COSMOS_DATABASE, cosmosContainers } from '../../shared/app/cosmos-containers.js';
import { createCosmosQuotaState } from '../../shared/quota/adapters/cosmos-quota-state.js';
import { createCosmosSearchCounter } from '../../shared/quota/adapters/cosmos-search-counter.js';
import { QUOTAS_CONTAINER } from '../../shared/quota/contracts.js';
import type { SearchCounter } from '../../shared/quota/search-rate.js';

let local: LocalCosmos;
const clients: CosmosClient[] = [];
let one: SearchCounter;
let two: SearchCounter;

beforeAll(async () => {
  local = await startLocalCosmos();
  clients.push(createLocalCosmosClient(local), createLocalCosmosClient(local));
  await provisionCosmos(clients[0]!, COSMOS_DATABASE, cosmosContainers);
  [one, two] = clients.map((client) =>
    createCosmosSearchCounter(client.database(COSMOS_DATABASE).container(QUOTAS_CONTAINER)),
  ) as [SearchCounter, SearchCounter];
}, 60_000);

afterAll(async () => {
  for (const client of clients) client.dispose();
  await local?.stop();
});

const user = () => `user_${randomUUID().slice(0, 8)}`;

describe('the search counter', () => {
  it('ten parallel searches from two instances: three counted, the rest told the count', async () => {
    const userId = user();
    const window = { start: new Date('2026-11-26T10:15:00.000Z'), seconds: 60 };
    const outcomes = await Promise.all(
      Array.from({ length: 10 }, (_, n) => (n % 2 === 0 ? one : two).countSearch(userId, window, 3)),
    );
    expect(outcomes.filter((outcome) => outcome.counted)).toHaveLength(3);
    expect(outcomes.find((outcome) => !outcome.counted)).toEqual({ counted: false, count: 3 });

    const next = { start: new Date('2026-11-26T10:16:00.000Z'), seconds: 60 };
    expect(await one.countSearch(userId, next, 3)).toEqual({ counted: true });
    expect(await one.countSearch(user(), window, 3)).toEqual({ counted: true });
    // The same user's message counter of the same minute is a document of its own.
    const messages = createCosmosQuotaState(
      clients[0]!.database(COSMOS_DATABASE).container(QUOTAS_CONTAINER),
    );
    expect(await messages.countMessage(userId, window, 3)).toEqual({ counted: true });
  });
});
