// A profile's facts by scope, through both of the Cosmos DB adapter's paths over the local Cosmos DB with the real
// @azure/cosmos client: the active facts' copy filtered in process, and the query of the facts by status, select the
// same facts, a fact that names no scope (written before memory had scopes) being the user's shared memory.
import type { CosmosClient } from '@azure/cosmos';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createLocalCosmosClient,
  provisionCosmos,
  startLocalCosmos,
  type LocalCosmos,
} from '../../local/cosmos/local-cosmos.js';
import { COSMOS_DATABASE, cosmosContainers } from '../../shared/app/cosmos-containers.js';
import type { MemoryScope } from '../../shared/conversation/memory-scope.js';
import { createMemoryStores, type MemoryStores } from '../../shared/memory/adapters/memory-adapters.js';
import { factSource, profileFact, storeFacts } from '../support/memory-fixtures.js';

const USER = 'user_001';
const PROJECT: MemoryScope = `project:proj-${'b'.repeat(32)}`;
const ASSISTANT: MemoryScope = `assistant:asst-${'a'.repeat(32)}`;

let local: LocalCosmos;
let client: CosmosClient;
let stores: MemoryStores;

beforeAll(async () => {
  local = await startLocalCosmos();
  client = createLocalCosmosClient(local);
  await provisionCosmos(client, COSMOS_DATABASE, cosmosContainers);
  stores = createMemoryStores(client.database(COSMOS_DATABASE), { ranking: 'in-process' });
  const source = [factSource('s1', 1)];
  await storeFacts(
    stores.facts,
    // No scope field at all: the user's shared memory, as a fact written before scopes.
    profileFact(USER, 'unnamed', source),
    profileFact(USER, 'named-user', source, { scope: 'user' }),
    profileFact(USER, 'in-project', source, { scope: PROJECT }),
    profileFact(USER, 'in-assistant', source, { scope: ASSISTANT }),
  );
}, 60_000);

afterAll(async () => {
  client?.dispose();
  await local?.stop();
});

describe("a profile's facts by scope", () => {
  it.each<[string, MemoryScope[], string[]]>([
    ['the user alone', ['user'], ['named-user', 'unnamed']],
    ['the project alone', [PROJECT], ['in-project']],
    ['the user and the project', ['user', PROJECT], ['in-project', 'named-user', 'unnamed']],
    ['the assistant and the project', [ASSISTANT, PROJECT], ['in-assistant', 'in-project']],
    ['none', [], []],
  ])('are the same from the copy and from the query: %s', async (_name, scopes, expected) => {
    const fromCopy = await stores.facts.list(USER, { statuses: ['active'], scopes });
    const fromQuery = await stores.facts.list(USER, { statuses: ['active', 'superseded'], scopes });
    const ids = (facts: readonly { id: string }[]) => facts.map((fact) => fact.id).sort();
    expect(ids(fromCopy)).toEqual(expected);
    expect(ids(fromQuery)).toEqual(expected);
  });
});
