// Hostile item ids against the local Cosmos DB server with the real @azure/cosmos client, recording every URL the
// server receives: the SDK itself turns `item('..')` into a request for the container (shown here on a scratch
// container), while the guarded accessor, and every adapter helper built on it, sends no request at all.
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import type { IncomingMessage } from 'node:http';
import type { CosmosClient, Database } from '@azure/cosmos';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  createLocalCosmosClient,
  provisionCosmos,
  startLocalCosmos,
  type LocalCosmos,
} from '../../local/cosmos/local-cosmos.js';
import { deleteItem, readItem, readItemIfChanged } from '../../shared/cosmos/adapters/cosmos-items.js';
import { patchItem, writeOnVersion } from '../../shared/cosmos/adapters/cosmos-patch.js';
import { guardedItem, UnsafeItemIdError } from '../../shared/cosmos/adapters/guarded-item.js';
import { COSMOS_DATABASE, cosmosContainers } from '../../shared/app/cosmos-containers.js';
import { createCosmosProfileFacts } from '../../shared/memory/adapters/cosmos-profile-facts.js';
import { PROFILE_FACTS_CONTAINER } from '../../shared/memory/contracts.js';
import { factSource, profileFact } from '../support/memory-fixtures.js';

/** Ids that must never reach an item's URL: dot segments, URL-breaking characters, control characters. */
const HOSTILE_IDS = [
  '',
  '.',
  '..',
  '/',
  '../..',
  'a/..',
  '..\\',
  '\\',
  '?',
  '..?x',
  '#',
  '..#',
  '%2e%2e',
  '%2E%2E',
  '.%2e',
  'fact\u0000',
  'line\nbreak',
  'tab\there',
  '\u007f',
  '\u0085',
];

const SCRATCH = 'scratch-dots';
const LEGIT_FACT = 'fact-0123456789abcdef';
const anything = z.unknown();

let local: LocalCosmos;
let client: CosmosClient;
let database: Database;
/** `METHOD path` of every request the local server received while recording. */
let received: string[] = [];

// Node announces each request an HTTP(S) server of this process receives; this keeps those of the Cosmos server.
const onRequest = (message: unknown) => {
  const { request } = message as { request: IncomingMessage };
  if (local !== undefined && request.socket.localPort === Number(new URL(local.endpoint).port))
    received.push(`${request.method ?? '?'} ${request.url ?? '?'}`);
};

beforeAll(async () => {
  // A clock keeps the server on this thread, where the test's diagnostics channel sees the requests it receives.
  local = await startLocalCosmos({ now: () => Date.now() });
  client = createLocalCosmosClient(local);
  await provisionCosmos(client, COSMOS_DATABASE, [
    ...cosmosContainers,
    { id: SCRATCH, partitionKeyPaths: ['/pk'], purpose: 'a container the raw SDK may drop (test only)' },
  ]);
  database = client.database(COSMOS_DATABASE);
  subscribe('http.server.request.start', onRequest);
}, 60_000);

afterAll(async () => {
  unsubscribe('http.server.request.start', onRequest);
  client?.dispose();
  await local?.stop();
});

afterEach(() => {
  received = [];
});

/** A URL at or above a container: `/dbs/{db}/colls/{id}` with nothing, or only `/` or `/docs`, after it. */
const CONTAINER_LEVEL = /^\/dbs\/[^/]+\/colls\/[^/?]+(\/(docs\/?)?)?(\?.*)?$/;
const writesAtContainerLevel = (requests: readonly string[]) =>
  requests.filter((request) => {
    const [method = '', path = ''] = request.split(' ');
    // Creating and querying items are POSTs to the container's /docs; anything else there names the container.
    return CONTAINER_LEVEL.test(path) && method !== 'POST';
  });

async function seedFact(userId: string, id: string) {
  await database
    .container(PROFILE_FACTS_CONTAINER)
    .items.create(profileFact(userId, id, [factSource('11111111-1111-4111-8111-111111111111', 1)]));
}

async function factIds(userId: string): Promise<string[]> {
  const { resources } = await database
    .container(PROFILE_FACTS_CONTAINER)
    .items.query<string>(
      { query: 'SELECT VALUE c.id FROM c WHERE c.userId = @u', parameters: [{ name: '@u', value: userId }] },
      { partitionKey: userId },
    )
    .fetchAll();
  return resources.sort();
}

describe('the raw SDK, without the guard', () => {
  it("sends item('..').delete() to the container's own URL, and the server drops the container", async () => {
    const scratch = database.container(SCRATCH);
    await scratch.items.create({ id: 'kept', pk: 'p' });
    received = [];
    await scratch.item('..', 'p').delete();
    expect(received).toEqual([`DELETE /dbs/${COSMOS_DATABASE}/colls/${SCRATCH}/`]);
    expect(writesAtContainerLevel(received)).toHaveLength(1);
    await expect(scratch.read()).rejects.toMatchObject({ code: 404 });
  });
});

describe('the guarded accessor and the helpers built on it', () => {
  beforeAll(async () => {
    await seedFact('user_001', LEGIT_FACT);
    await seedFact('user_002', 'fact-fedcba9876543210');
  });

  it('refuses every hostile id before any request, whatever the operation', async () => {
    const facts = database.container(PROFILE_FACTS_CONTAINER);
    const store = createCosmosProfileFacts(facts);
    received = [];
    for (const id of HOSTILE_IDS) {
      const attempts: (() => unknown)[] = [
        () => guardedItem(facts, id, 'user_002'),
        () => readItem(facts, id, 'user_002', 'a fact', anything),
        () => readItemIfChanged(facts, id, 'user_002', 'a fact', anything, '"etag"'),
        () => deleteItem(facts, id, 'user_002', 'a fact'),
        () => deleteItem(facts, id, 'user_002', 'a fact', '"etag"'),
        () => patchItem(facts, id, 'user_002', [{ op: 'set', path: '/x', value: 1 }], undefined, 'a fact'),
        () => writeOnVersion(facts, { id, userId: 'user_002' }, 'user_002', '"etag"', 'a fact'),
        () => store.delete('user_002', id),
        () => store.get('user_002', id),
      ];
      for (const attempt of attempts) {
        const outcome = await Promise.resolve()
          .then(attempt)
          .then(
            () => 'done',
            (error: unknown) => error,
          );
        expect(outcome, `id ${JSON.stringify(id)}`).toBeInstanceOf(UnsafeItemIdError);
        expect(outcome).toMatchObject({ code: 'unsafe_item_id', status: 500 });
        // What a client could be shown names no id; the id is kept, escaped, in the cause, for the logs.
        expect((outcome as Error).message).toBe(
          'An internal check refused a Cosmos DB item id; nothing was sent to the database.',
        );
        expect(String((outcome as Error).cause)).toContain(JSON.stringify(id));
      }
      // The other user's data is intact after each attempt.
      expect(await factIds('user_001')).toEqual([LEGIT_FACT]);
    }
    // Only the checks' own queries reached the server: no read, write or delete of any item or container.
    expect(received.filter((request) => !request.startsWith('POST '))).toEqual([]);
    expect(writesAtContainerLevel(received)).toEqual([]);
    await expect(facts.read()).resolves.toMatchObject({ statusCode: 200 });
  });

  it('refuses a partition key that is empty or holds a control character', () => {
    const facts = database.container(PROFILE_FACTS_CONTAINER);
    for (const partitionKey of ['', 'user\u0000', ['user_001', 'a\nb']])
      expect(() => guardedItem(facts, LEGIT_FACT, partitionKey)).toThrow(UnsafeItemIdError);
  });

  it('lets legitimate ids through to their own item URL', async () => {
    const facts = database.container(PROFILE_FACTS_CONTAINER);
    const read = await readItem(facts, LEGIT_FACT, 'user_001', 'a fact', anything);
    expect(read?.resource).toMatchObject({ id: LEGIT_FACT, userId: 'user_001' });
    expect(
      await patchItem(
        facts,
        LEGIT_FACT,
        'user_001',
        [{ op: 'set', path: '/x', value: 1 }],
        undefined,
        'a fact',
      ),
    ).toBe('patched');
    // Ids the product makes: a turn's record, a message, a chunk, an upload part, an event batch, a ticket.
    const ids = [
      'turn.0f8fad5b-d9cb-469f-a165-70867728950e.round.1.tool.0',
      '0f8fad5b-d9cb-469f-a165-70867728950e_user',
      '0123456789abcdef0123456789abcdef.12',
      '0f8fad5b-d9cb-469f-a165-70867728950e:00000001',
      'ticket.Zm9v_YmFy-',
      'user@example.com',
    ];
    for (const id of ids) {
      await facts.items.create({ id, userId: 'user_003' });
      expect((await readItem(facts, id, 'user_003', 'an item', anything))?.resource).toMatchObject({ id });
      expect(await deleteItem(facts, id, 'user_003', 'an item')).toBe(true);
    }
    const points = received.filter((request) => !request.startsWith('POST '));
    expect(points.length).toBeGreaterThan(0);
    expect(writesAtContainerLevel(received)).toEqual([]);
    for (const request of points) expect(request).toMatch(/\/colls\/profile-facts\/docs\/[^/]+$/);
    expect(await factIds('user_001')).toEqual([LEGIT_FACT]);
  });
});
