// Contract tests of the local Cosmos DB server with the real @azure/cosmos client: CRUD, queries, patch,
// optimistic concurrency, persistence across a restart (snapshot + journal), TTL expiry, partition-scoped queries,
// request counters, corrupt data files and provisioning.
import https from 'node:https';
import { mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import type { Container, CosmosClient, ErrorResponse } from '@azure/cosmos';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import {
  CorruptDataFileError,
  createLocalCosmosClient,
  provisionCosmos,
  startLocalCosmos,
  type LocalCosmos,
} from '../../local/cosmos/local-cosmos.js';
import {
  HOT_CONVERSATIONS_CONTAINER,
  HOT_STORE_TTL_SECONDS,
  SESSIONS_CONTAINER,
} from '../../shared/chat/contracts/documents.js';
import type { ContainerSpec } from '../../shared/cosmos/container-spec.js';
import { COSMOS_DATABASE, cosmosContainers } from '../../shared/app/cosmos-containers.js';
import { CONVERSATION_MESSAGES_CONTAINER } from '../../shared/history/contracts.js';

const TTL_CONTAINER = 'ttl-per-item';
const schema: readonly ContainerSpec[] = [
  ...cosmosContainers,
  {
    id: TTL_CONTAINER,
    partitionKeyPaths: ['/pk'],
    defaultTtlSeconds: -1,
    purpose: 'per-item ttl (test only)',
  },
];

let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'local-cosmos-contract-'));
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** Starts a server on `dataFile` with a client and the schema provisioned; `use` runs, then all is closed. */
async function withCosmos(
  dataFile: string,
  use: (ctx: { local: LocalCosmos; client: CosmosClient }) => Promise<void>,
): Promise<void> {
  const local = await startLocalCosmos({ dataFile });
  const client = createLocalCosmosClient(local);
  try {
    await provisionCosmos(client, COSMOS_DATABASE, schema);
    await use({ local, client });
  } finally {
    client.dispose();
    await local.stop();
  }
}

function container(client: CosmosClient, id: string): Container {
  return client.database(COSMOS_DATABASE).container(id);
}

/** The text of the journals beside a data file (`<file>.<n>.journal`). */
async function journalText(dataFile: string): Promise<string> {
  const prefix = `${dataFile.split('/').at(-1)}.`;
  const names = (await readdir(dir)).filter((name) => name.startsWith(prefix) && name.endsWith('.journal'));
  const texts = await Promise.all(names.map((name) => readFile(join(dir, name), 'utf8')));
  return texts.join('');
}

async function statusOf(operation: Promise<unknown>): Promise<number | undefined> {
  try {
    await operation;
    return 200;
  } catch (error) {
    return (error as ErrorResponse).code as number | undefined;
  }
}

describe('local Cosmos DB with the real @azure/cosmos client', () => {
  let local: LocalCosmos;
  let client: CosmosClient;
  // TTL is judged by this clock, which the TTL test moves forward instead of sleeping.
  let clockOffsetMs = 0;
  const now = () => Date.now() + clockOffsetMs;

  beforeAll(async () => {
    local = await startLocalCosmos({ dataFile: join(dir, 'main.json'), now });
    client = createLocalCosmosClient(local);
    await provisionCosmos(client, COSMOS_DATABASE, schema);
  });

  afterAll(async () => {
    client?.dispose();
    await local?.stop();
  });

  it('creates an item and reads it back by id and partition key', async () => {
    const sessions = container(client, SESSIONS_CONTAINER);
    const { resource: created, statusCode } = await sessions.items.create({
      id: 's-1',
      userId: 'u-1',
      title: 'Hi',
    });
    expect(statusCode).toBe(201);

    const { resource: read, etag } = await sessions.item('s-1', 'u-1').read<{ title: string }>();
    expect(read?.title).toBe('Hi');
    expect(etag).toBe(created?._etag);
    expect((await sessions.item('missing', 'u-1').read()).statusCode).toBe(404);
  });

  it('round-trips items in a container with a hierarchical (MultiHash) key, as provisioned from the schema', async () => {
    const messages = container(client, CONVERSATION_MESSAGES_CONTAINER);
    const { resource: definition } = await messages.read();
    expect(definition?.partitionKey).toMatchObject({ paths: ['/userId', '/sessionId'], kind: 'MultiHash' });

    // Ids unique per user: the local server files items under the first key path only (provision-cosmos.ts).
    for (const [id, sessionId, content] of [
      ['m-1_user', 'hk-s1', 'first session'],
      ['m-2_user', 'hk-s2', 'second session'],
    ] as const) {
      const { statusCode } = await messages.items.create({ id, userId: 'hk-u1', sessionId, content });
      expect(statusCode).toBe(201);
    }
    await messages.items.create({
      id: 'm-3_user',
      userId: 'hk-u2',
      sessionId: 'hk-s3',
      content: 'other user',
    });

    const { resource } = await messages.item('m-2_user', ['hk-u1', 'hk-s2']).read<{ content: string }>();
    expect(resource?.content).toBe('second session');
    expect((await messages.item('m-2_user', ['hk-u2', 'hk-s2']).read()).statusCode).toBe(404);

    const inUser = await messages.items
      .query<{ id: string }>(
        {
          query: 'SELECT c.id FROM c WHERE c.userId = @userId ORDER BY c.id',
          parameters: [{ name: '@userId', value: 'hk-u1' }],
        },
        { partitionKey: ['hk-u1'] },
      )
      .fetchAll();
    expect(inUser.resources.map((item) => item.id)).toEqual(['m-1_user', 'm-2_user']);

    const inSession = await messages.items
      .query<{ id: string }>(
        {
          query: 'SELECT c.id FROM c WHERE c.userId = @userId AND c.sessionId = @sessionId',
          parameters: [
            { name: '@userId', value: 'hk-u1' },
            { name: '@sessionId', value: 'hk-s1' },
          ],
        },
        { partitionKey: ['hk-u1', 'hk-s1'] },
      )
      .fetchAll();
    expect(inSession.resources.map((item) => item.id)).toEqual(['m-1_user']);
  });

  it('runs parameterised queries with ORDER BY and TOP', async () => {
    const sessions = container(client, SESSIONS_CONTAINER);
    for (const [id, createdAt] of [
      ['q-1', 10],
      ['q-2', 30],
      ['q-3', 20],
    ] as const) {
      await sessions.items.create({ id, userId: 'u-query', createdAt });
    }
    await sessions.items.create({ id: 'q-other', userId: 'u-someone-else', createdAt: 99 });

    const { resources } = await sessions.items
      .query<{ id: string }>(
        {
          query: 'SELECT TOP @n c.id FROM c WHERE c.userId = @userId ORDER BY c.createdAt DESC',
          parameters: [
            { name: '@n', value: 2 },
            { name: '@userId', value: 'u-query' },
          ],
        },
        { partitionKey: 'u-query' },
      )
      .fetchAll();
    expect(resources.map((item) => item.id)).toEqual(['q-2', 'q-3']);
  });

  it('patches an item', async () => {
    const sessions = container(client, SESSIONS_CONTAINER);
    await sessions.items.create({ id: 'p-1', userId: 'u-1', turns: 1, title: 'old' });
    const { resource } = await sessions.item('p-1', 'u-1').patch<{ turns: number; title: string }>([
      { op: 'incr', path: '/turns', value: 2 },
      { op: 'set', path: '/title', value: 'new' },
    ]);
    expect(resource).toMatchObject({ turns: 3, title: 'new' });
  });

  it('refuses a write with a stale ETag (412) and accepts the fresh one', async () => {
    const sessions = container(client, SESSIONS_CONTAINER);
    const { resource: first } = await sessions.items.create({ id: 'e-1', userId: 'u-1', v: 1 });
    const staleEtag = first!._etag;
    const { resource: second } = await sessions
      .item('e-1', 'u-1')
      .replace({ id: 'e-1', userId: 'u-1', v: 2 });
    expect(second!._etag).not.toBe(staleEtag);

    const ifMatch = (etag: string) => ({ accessCondition: { type: 'IfMatch', condition: etag } });
    expect(
      await statusOf(
        sessions.item('e-1', 'u-1').replace({ id: 'e-1', userId: 'u-1', v: 3 }, ifMatch(staleEtag)),
      ),
    ).toBe(412);
    expect(
      await statusOf(
        sessions.item('e-1', 'u-1').patch([{ op: 'set', path: '/v', value: 3 }], ifMatch(staleEtag)),
      ),
    ).toBe(412);
    const { resource: third } = await sessions
      .item('e-1', 'u-1')
      .replace({ id: 'e-1', userId: 'u-1', v: 3 }, ifMatch(second!._etag));
    expect(third).toMatchObject({ v: 3 });
  });

  it('has a write on disk, in the journal, by the time it is acknowledged', async () => {
    await container(client, SESSIONS_CONTAINER).items.create({ id: 'saved-at-once', userId: 'u-1' });
    expect(await journalText(join(dir, 'main.json'))).toContain('saved-at-once');
  });

  it('expires items after the container default TTL and after their own ttl', async () => {
    const hot = container(client, HOT_CONVERSATIONS_CONTAINER);
    const perItem = container(client, TTL_CONTAINER);
    await hot.items.create({ id: 'h-expires', sessionId: 's-ttl' });
    await hot.items.create({ id: 'h-forever', sessionId: 's-ttl', ttl: -1 });
    await perItem.items.create({ id: 'i-short', pk: 'k', ttl: 2 });
    await perItem.items.create({ id: 'i-no-ttl', pk: 'k' });

    clockOffsetMs += 3_000;
    expect((await perItem.item('i-short', 'k').read()).statusCode).toBe(404);
    expect((await perItem.item('i-no-ttl', 'k').read()).statusCode).toBe(200);
    expect((await hot.item('h-expires', 's-ttl').read()).statusCode).toBe(200);

    clockOffsetMs += HOT_STORE_TTL_SECONDS * 1000;
    const { resources } = await hot.items
      .query<{ id: string }>({
        query: 'SELECT c.id FROM c WHERE c.sessionId = @s',
        parameters: [{ name: '@s', value: 's-ttl' }],
      })
      .fetchAll();
    expect(resources.map((item) => item.id)).toEqual(['h-forever']);
    expect((await hot.item('h-expires', 's-ttl').read()).statusCode).toBe(404);

    // The expiry deletion is journalled like any delete: a compacted snapshot no longer holds the item.
    await local.compact();
    const saved = await readFile(join(dir, 'main.json'), 'utf8');
    expect(saved).not.toContain('h-expires');
    expect(saved).toContain('h-forever');
  });

  it('provisioning again is harmless: same containers, same settings, data kept', async () => {
    await container(client, SESSIONS_CONTAINER).items.create({ id: 'prov-1', userId: 'u-prov' });
    await provisionCosmos(client, COSMOS_DATABASE, schema);
    await provisionCosmos(client, COSMOS_DATABASE, schema);

    const { resources } = await client.database(COSMOS_DATABASE).containers.readAll().fetchAll();
    expect(resources.map((c) => c.id).sort()).toEqual(schema.map((c) => c.id).sort());
    const hot = resources.find((c) => c.id === HOT_CONVERSATIONS_CONTAINER);
    expect(hot?.defaultTtl).toBe(HOT_STORE_TTL_SECONDS);
    expect(hot?.partitionKey?.paths).toEqual(['/sessionId']);
    // Sessions never expire by default; only a deleted conversation's tombstone carries a ttl of its own.
    expect(resources.find((c) => c.id === SESSIONS_CONTAINER)?.defaultTtl).toBe(-1);
    expect((await container(client, SESSIONS_CONTAINER).item('prov-1', 'u-prov').read()).statusCode).toBe(
      200,
    );
  });

  it('provisioning brings a changed default TTL in line with the schema', async () => {
    const ttlOf = async () => (await container(client, TTL_CONTAINER).read()).resource?.defaultTtl;
    const changed = schema.map((c) => (c.id === TTL_CONTAINER ? { ...c, defaultTtlSeconds: 120 } : c));
    await provisionCosmos(client, COSMOS_DATABASE, changed);
    expect(await ttlOf()).toBe(120);
    await provisionCosmos(client, COSMOS_DATABASE, schema);
    expect(await ttlOf()).toBe(-1);
  });

  it('looks only at the partition a query names, for a full hierarchical key and for its prefix', async () => {
    const messages = container(client, CONVERSATION_MESSAGES_CONTAINER);
    for (let user = 0; user < 40; user++) {
      for (const session of ['s1', 's2']) {
        for (const turn of [1, 2]) {
          await messages.items.create({
            id: `pq-${session}-${turn}`,
            userId: `pq-u${user}`,
            sessionId: session,
          });
        }
      }
    }
    const scanned = async (run: () => Promise<string[]>) => {
      const before = local.diagnostics().queryDocumentsScanned;
      const ids = await run();
      return { ids, scanned: local.diagnostics().queryDocumentsScanned - before };
    };
    const ids = (query: string, partitionKey?: string[]) => async () =>
      (
        await messages.items.query<{ id: string }>(query, partitionKey ? { partitionKey } : {}).fetchAll()
      ).resources.map((item) => item.id);

    const session = await scanned(ids('SELECT c.id FROM c ORDER BY c.id', ['pq-u7', 's2']));
    expect(session).toEqual({ ids: ['pq-s2-1', 'pq-s2-2'], scanned: 2 });
    const user = await scanned(ids('SELECT c.id FROM c ORDER BY c.id', ['pq-u7']));
    expect(user).toEqual({ ids: ['pq-s1-1', 'pq-s1-2', 'pq-s2-1', 'pq-s2-2'], scanned: 4 });

    // A deleted item leaves its partition's index at once.
    await messages.item('pq-s2-1', ['pq-u7', 's2']).delete();
    expect(await scanned(ids('SELECT c.id FROM c', ['pq-u7', 's2']))).toEqual({
      ids: ['pq-s2-2'],
      scanned: 1,
    });

    // Without a partition key the query still works, over the whole container.
    const everywhere = await scanned(ids("SELECT c.id FROM c WHERE c.sessionId = 's1' AND c.id = 'pq-s1-1'"));
    expect(everywhere.ids).toHaveLength(40);
    expect(everywhere.scanned).toBeGreaterThanOrEqual(40 * 4 - 1);
  });

  it('counts the requests it answers, with body bytes, by operation and by container', async () => {
    const sessions = container(client, SESSIONS_CONTAINER);
    local.resetStats();
    expect(local.stats()).toEqual({
      requests: 0,
      requestBytes: 0,
      responseBytes: 0,
      byOperation: {},
      byContainer: {},
      requestUnits: 0,
    });
    const { resource } = await sessions.items.create({
      id: 'counted',
      userId: 'u-count',
      text: 'x'.repeat(500),
    });
    await sessions.items.upsert({ ...resource, text: 'y' });
    await sessions.item('counted', 'u-count').read();
    await sessions.items.query({ query: 'SELECT * FROM c' }, { partitionKey: 'u-count' }).fetchAll();

    const stats = local.stats();
    expect(stats.byOperation).toMatchObject({ 'item.create': 1, 'item.upsert': 1, 'item.read': 1 });
    expect(stats.byOperation['item.query']).toBeGreaterThanOrEqual(1);
    expect(stats.requests).toBe(Object.values(stats.byOperation).reduce((sum, count) => sum + count, 0));
    expect(stats.requestBytes).toBeGreaterThan(500);
    expect(stats.responseBytes).toBeGreaterThan(500 * 1);
    const created = stats.byContainer[`${SESSIONS_CONTAINER} item.create`];
    expect(created?.requests).toBe(1);
    expect(created?.bytes).toBeGreaterThan(500);
    expect(Object.values(stats.byContainer).reduce((sum, entry) => sum + entry.bytes, 0)).toBe(
      stats.requestBytes + stats.responseBytes,
    );
    local.resetStats();
    expect(local.stats().requests).toBe(0);
  });

  it('is trusted only through its own agent', async () => {
    const get = (agent: https.Agent) =>
      new Promise<number | string>((resolve) => {
        https
          .get(local.endpoint, { agent }, (res) => {
            res.resume();
            resolve(res.statusCode ?? 0);
          })
          .on('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? 'error'));
      });
    expect(await get(local.agent)).toBe(200);
    const publicTrust = new https.Agent();
    try {
      expect(await get(publicTrust)).toBe('DEPTH_ZERO_SELF_SIGNED_CERT');
    } finally {
      publicTrust.destroy();
    }
  });
});

describe('persistence across a restart', () => {
  it('keeps containers, items and their ETags', async () => {
    const dataFile = join(dir, 'restart.json');
    let etagBefore = '';
    let staleEtag = '';
    await withCosmos(dataFile, async ({ client }) => {
      const sessions = container(client, SESSIONS_CONTAINER);
      const { resource: v1 } = await sessions.items.create({ id: 'r-1', userId: 'u-r', v: 1 });
      staleEtag = v1!._etag;
      const { resource: v2 } = await sessions.items.upsert({ id: 'r-1', userId: 'u-r', v: 2 });
      etagBefore = v2!._etag;
      await container(client, HOT_CONVERSATIONS_CONTAINER).items.create({ id: 'hot-1', sessionId: 's-r' });
    });

    const local = await startLocalCosmos({ dataFile });
    const client = createLocalCosmosClient(local);
    try {
      const { resources } = await client.database(COSMOS_DATABASE).containers.readAll().fetchAll();
      expect(resources.map((c) => c.id).sort()).toEqual(schema.map((c) => c.id).sort());
      expect(resources.find((c) => c.id === HOT_CONVERSATIONS_CONTAINER)?.defaultTtl).toBe(
        HOT_STORE_TTL_SECONDS,
      );

      const sessions = container(client, SESSIONS_CONTAINER);
      const { resource, etag } = await sessions.item('r-1', 'u-r').read<{ v: number }>();
      expect(resource?.v).toBe(2);
      expect(etag).toBe(etagBefore);
      expect(
        (await container(client, HOT_CONVERSATIONS_CONTAINER).item('hot-1', 's-r').read()).statusCode,
      ).toBe(200);

      const ifMatch = (condition: string) => ({ accessCondition: { type: 'IfMatch', condition } });
      expect(
        await statusOf(
          sessions.item('r-1', 'u-r').replace({ id: 'r-1', userId: 'u-r', v: 9 }, ifMatch(staleEtag)),
        ),
      ).toBe(412);
      const { resource: v3 } = await sessions
        .item('r-1', 'u-r')
        .replace({ id: 'r-1', userId: 'u-r', v: 3 }, ifMatch(etagBefore));
      expect(v3).toMatchObject({ v: 3 });

      // New items get fresh resource ids, not ones already taken before the restart.
      const { resource: other } = await sessions.items.create({ id: 'r-2', userId: 'u-r' });
      expect(other!._rid).not.toBe(v3!._rid);
      const { resources: all } = await sessions.items.readAll<{ id: string; _rid: string }>().fetchAll();
      expect(new Set(all.map((item) => item._rid)).size).toBe(all.length);
    } finally {
      client.dispose();
      await local.stop();
    }
  });
});

describe('the data file and its journal', () => {
  it('replays the journal on top of a compacted snapshot, and compacts again on a clean stop', async () => {
    const dataFile = join(dir, 'journal.json');
    await withCosmos(dataFile, async ({ local, client }) => {
      const sessions = container(client, SESSIONS_CONTAINER);
      await sessions.items.create({ id: 'before-compaction', userId: 'u-j' });
      await local.compact();
      await sessions.items.create({ id: 'after-compaction', userId: 'u-j' });
      await sessions.item('before-compaction', 'u-j').delete();
      expect(await journalText(dataFile)).toContain('after-compaction');
      expect(local.diagnostics().journal?.compactions).toBe(1);
    });
    // The clean stop wrote one snapshot holding everything, and left an empty journal.
    expect(await readFile(dataFile, 'utf8')).toContain('after-compaction');
    expect(await journalText(dataFile)).toBe('');
    await withCosmos(dataFile, async ({ client }) => {
      const sessions = container(client, SESSIONS_CONTAINER);
      expect((await sessions.item('after-compaction', 'u-j').read()).statusCode).toBe(200);
      expect((await sessions.item('before-compaction', 'u-j').read()).statusCode).toBe(404);
    });
  });

  it('compacts by itself once the journal outgrows its threshold', async () => {
    const dataFile = join(dir, 'auto-compaction.json');
    const local = await startLocalCosmos({ dataFile, compaction: { minJournalBytes: 20_000 } });
    const client = createLocalCosmosClient(local);
    try {
      await provisionCosmos(client, COSMOS_DATABASE, schema);
      const sessions = container(client, SESSIONS_CONTAINER);
      for (let i = 0; i < 60; i++)
        await sessions.items.upsert({ id: 'rewritten', userId: 'u-a', text: 'z'.repeat(1000), i });
      await local.flush();
      expect(local.diagnostics().journal?.compactions).toBeGreaterThanOrEqual(1);
      expect(local.diagnostics().journal?.journalBytes).toBeLessThan(60 * 1000);
    } finally {
      client.dispose();
      await local.stop();
    }
    await withCosmos(dataFile, async ({ client }) => {
      const { resource } = await container(client, SESSIONS_CONTAINER)
        .item('rewritten', 'u-a')
        .read<{ i: number }>();
      expect(resource?.i).toBe(59);
    });
  });

  it('reads a data file written before journals existed (a plain snapshot)', async () => {
    const dataFile = join(dir, 'legacy.json');
    await withCosmos(dataFile, async ({ client }) => {
      await container(client, SESSIONS_CONTAINER).items.create({ id: 'legacy-item', userId: 'u-l' });
    });
    const envelope = JSON.parse(await readFile(dataFile, 'utf8')) as { state: unknown };
    await writeFile(dataFile, JSON.stringify(envelope.state));
    await withCosmos(dataFile, async ({ client }) => {
      expect((await container(client, SESSIONS_CONTAINER).item('legacy-item', 'u-l').read()).statusCode).toBe(
        200,
      );
    });
  });
});

describe('a data file that cannot be loaded', () => {
  it.each([
    ['not JSON', '{"format": "local-cosmos-snapshot", '],
    ['JSON of another shape', JSON.stringify({ databases: 'none' })],
  ])(
    'stops start-up with an error naming the file (%s), and leaves it untouched',
    async (_label, content) => {
      const dataFile = join(dir, `corrupt-${_label.replace(/\W+/g, '-')}.json`);
      await writeFile(dataFile, content);

      const error = await startLocalCosmos({ dataFile }).then(
        (local) => local.stop().then(() => undefined),
        (thrown: unknown) => thrown,
      );
      expect(error).toBeInstanceOf(CorruptDataFileError);
      expect((error as Error).message).toContain(dataFile);
      expect(await readFile(dataFile, 'utf8')).toBe(content);
    },
  );
});
