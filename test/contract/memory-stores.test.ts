// Contract tests of the memory area's Cosmos DB adapters against the local Cosmos DB with the real
// @azure/cosmos client: port semantics, conditional writes, paging, isolation between users, search after
// deletes.
import type { CosmosClient, Database } from '@azure/cosmos';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import {
  createLocalCosmosClient,
  provisionCosmos,
  startLocalCosmos,
  type LocalCosmos,
} from '../../local/cosmos/local-cosmos.js';
import { hashedEmbedding } from '../../local/offline-model/hashed-embedding.js';
import { COSMOS_DATABASE, cosmosContainers } from '../../shared/app/cosmos-containers.js';
import { ValidationError } from '../../shared/errors.js';
import { createMemoryStores, type MemoryStores } from '../../shared/memory/adapters/memory-adapters.js';
import {
  PROFILE_FACTS_CONTAINER,
  consolidationId,
  CONVERSATION_SUMMARIES_CONTAINER,
  type ConsolidationRecord,
  type ConversationSummaryDocument,
  type ProfileFact,
} from '../../shared/memory/contracts.js';
import { storeFacts, summaryDocument } from '../support/memory-fixtures.js';
import { MemoryProfileFacts } from '../support/in-memory-memory.js';
import type { ConsolidationQuery } from '../../shared/memory/profile-facts.js';
import { EVERY_HIT } from '../support/search-relevance.js';

const DIMENSIONS = 64;

let local: LocalCosmos;
let client: CosmosClient;
let database: Database;
let stores: MemoryStores;

beforeAll(async () => {
  local = await startLocalCosmos();
  client = createLocalCosmosClient(local);
  await provisionCosmos(client, COSMOS_DATABASE, cosmosContainers);
  database = client.database(COSMOS_DATABASE);
  stores = createMemoryStores(database, { ranking: 'in-process' });
});

afterAll(async () => {
  client?.dispose();
  await local?.stop();
});

const at = (minute: number) => new Date(Date.UTC(2025, 0, 1, 0, minute)).toISOString();

function summaryOf(
  userId: string,
  sessionId: string,
  text: string,
  extra: Partial<ConversationSummaryDocument> = {},
): ConversationSummaryDocument {
  return summaryDocument(userId, sessionId, {
    summary: text,
    themes: ['theme'],
    persons: [],
    places: [],
    user_sentiment: 'neutral',
    timestamp: at(1),
    vector_embedding: hashedEmbedding(text, DIMENSIONS),
    coveredThrough: 1,
    exchanges: 1,
    createdAt: at(0),
    ...extra,
  });
}

function factOf(userId: string, id: string, extra: Partial<ProfileFact> = {}): ProfileFact {
  return {
    id,
    kind: 'fact',
    userId,
    category: 'interests',
    statement: `Statement ${id}`,
    status: 'active',
    validFrom: at(0),
    provenance: [{ sessionId: 's-1', chatMessageId: 'm-1', messageId: 'm-1_user', at: at(0) }],
    createdAt: at(0),
    updatedAt: at(0),
    ...extra,
  };
}

function recordOf(
  userId: string,
  sessionId: string,
  chatMessageId: string,
  statement: string,
): ConsolidationRecord {
  return {
    id: consolidationId(sessionId, chatMessageId),
    kind: 'consolidation',
    userId,
    sessionId,
    chatMessageId,
    source: { sessionId, chatMessageId, messageId: `${chatMessageId}_user`, at: at(0) },
    changes: [{ op: 'add', factId: `f-${chatMessageId}`, category: 'goals', statement }],
    createdAt: at(0),
  };
}

const query = (text: string, limit = 5) => ({
  text,
  vector: hashedEmbedding(text, DIMENSIONS),
  limit,
  relevance: EVERY_HIT,
});

describe('Cosmos DB conversation summaries', () => {
  it('creates a summary once, then replaces it only at the version read', async () => {
    const first = summaryOf('mu-1', 'ms-1', 'Planning a trip to Lisbon');
    expect(await stores.summaries.put(first, undefined)).toBe('written');
    expect(await stores.summaries.put(first, undefined)).toBe('conflict'); // a second create
    const stored = await stores.summaries.get('mu-1', 'ms-1');
    expect(stored?.summary).toEqual(first);

    const grown = {
      ...first,
      summary: 'Planning a trip to Lisbon and Porto',
      coveredThrough: 3,
      exchanges: 2,
    };
    expect(await stores.summaries.put(grown, stored?.version)).toBe('written');
    // The version read before that write is stale now: a late writer loses instead of overwriting.
    expect(await stores.summaries.put({ ...first, summary: 'stale' }, stored?.version)).toBe('conflict');
    expect((await stores.summaries.get('mu-1', 'ms-1'))?.summary).toMatchObject({ coveredThrough: 3 });
    // Deleted meanwhile: a write at the old version does not bring it back.
    const current = await stores.summaries.get('mu-1', 'ms-1');
    expect(await stores.summaries.delete('mu-1', 'ms-1')).toBe(true);
    expect(await stores.summaries.put(grown, current?.version)).toBe('conflict');
    expect(await stores.summaries.get('mu-1', 'ms-1')).toBeUndefined();
    expect(await stores.summaries.delete('mu-1', 'ms-1')).toBe(false);
  });

  it('lists newest first in pages, without vectors, behind a token bound to the user', async () => {
    for (let i = 0; i < 7; i++)
      await stores.summaries.put(
        summaryOf('mu-list', `l-${i}`, `Conversation ${i}`, { timestamp: at(i) }),
        undefined,
      );
    await stores.summaries.put(summaryOf('mu-other', 'o-1', 'Not yours', { timestamp: at(30) }), undefined);

    const seen: string[] = [];
    let token: string | undefined;
    let pages = 0;
    do {
      const page = await stores.summaries.list('mu-list', {
        limit: 3,
        ...(token ? { continuationToken: token } : {}),
      });
      for (const summary of page.summaries) {
        expect(summary).not.toHaveProperty('vector_embedding');
        expect(summary).not.toHaveProperty('userId');
        expect(Object.keys(summary).sort()).toEqual(
          [
            'createdAt',
            'persons',
            'places',
            'sessionId',
            'summary',
            'themes',
            'timestamp',
            'user_sentiment',
          ].sort(),
        );
      }
      seen.push(...page.summaries.map((summary) => summary.sessionId));
      token = page.continuationToken;
      pages++;
    } while (token !== undefined);
    expect(seen).toEqual(['l-6', 'l-5', 'l-4', 'l-3', 'l-2', 'l-1', 'l-0']);
    expect(pages).toBe(3);

    const first = await stores.summaries.list('mu-list', { limit: 2 });
    expect(first.continuationToken).toBeDefined();
    // Another user's token, or a made-up one, is the caller's mistake (400), never another list's page.
    await expect(
      stores.summaries.list('mu-other', { limit: 2, continuationToken: first.continuationToken! }),
    ).rejects.toBeInstanceOf(ValidationError);
    await expect(
      stores.summaries.list('mu-list', { limit: 2, continuationToken: 'not-a-token' }),
    ).rejects.toBeInstanceOf(ValidationError);
    expect((await stores.summaries.list('mu-nobody', { limit: 5 })).summaries).toEqual([]);
  });

  it("never answers with another user's summary, even under the same session id", async () => {
    await stores.summaries.put(summaryOf('mu-a', 'shared', 'Alice talks about gardening'), undefined);
    await stores.summaries.put(summaryOf('mu-b', 'shared', 'Bob talks about gardening'), undefined);
    expect((await stores.summaries.get('mu-a', 'shared'))?.summary.summary).toBe(
      'Alice talks about gardening',
    );
    expect(await stores.summaries.get('mu-c', 'shared')).toBeUndefined();
    expect(await stores.summaries.delete('mu-c', 'shared')).toBe(false);
    const found = await stores.summaries.search('mu-a', query('gardening'));
    expect(found.map((match) => match.summary.summary)).toEqual(['Alice talks about gardening']);
    expect(await stores.summaries.deleteAll('mu-a')).toBe(1);
    expect(await stores.summaries.get('mu-b', 'shared')).toBeDefined();
  });

  it('searches by vector and words, best first, and a deleted summary is gone from the next search', async () => {
    const texts = [
      'Booked flights to Tokyo and discussed Japanese food',
      'Debugged a TypeScript build that failed on strict mode',
      'Talked about training for a marathon in the spring',
      'Compared hotels in Kyoto for the Japan trip',
    ];
    for (const [i, text] of texts.entries())
      await stores.summaries.put(summaryOf('mu-search', `q-${i}`, text), undefined);

    const japan = await stores.summaries.search('mu-search', query('Japan trip hotels', 2));
    expect(japan).toHaveLength(2);
    expect(japan[0]?.summary.sessionId).toBe('q-3');
    expect(japan[0]?.summary).not.toHaveProperty('vector_embedding');
    expect(japan[0]?.score).toBeGreaterThanOrEqual(japan[1]?.score ?? Infinity);
    expect(japan[0]?.similarity).toBeGreaterThan(0);

    // Searched once already (its vector is cached): deleting it still drops it from the very next search.
    expect(await stores.summaries.delete('mu-search', 'q-3')).toBe(true);
    const after = await stores.summaries.search('mu-search', query('Japan trip hotels', 4));
    expect(after.map((match) => match.summary.sessionId)).not.toContain('q-3');
    expect(after).toHaveLength(3);

    // Rewritten: the next search ranks the new text, not the cached one.
    const stored = await stores.summaries.get('mu-search', 'q-1');
    await stores.summaries.put(
      summaryOf('mu-search', 'q-1', 'Planned a Japan trip with hotels in Osaka'),
      stored?.version,
    );
    const rewritten = await stores.summaries.search('mu-search', query('Japan trip hotels', 1));
    expect(rewritten[0]?.summary.sessionId).toBe('q-1');
    expect(rewritten[0]?.summary.summary).toBe('Planned a Japan trip with hotels in Osaka');

    // A query of stop words only ranks by vector alone.
    expect(await stores.summaries.search('mu-search', query('the and of', 3))).toHaveLength(3);
    expect(await stores.summaries.search('mu-nobody', query('anything'))).toEqual([]);
  });

  it('reads a long history whole once, then only ids and versions per search', async () => {
    const texts = Array.from({ length: 230 }, (_, i) => `Conversation number ${i} about topic ${i % 17}`);
    await Promise.all(
      texts.map((text, i) => stores.summaries.put(summaryOf('mu-long', `long-${i}`, text), undefined)),
    );
    const fresh = createMemoryStores(database, { ranking: 'in-process' }); // a new process: nothing cached
    const wanted = query('Conversation number 123 about topic 4');

    local.resetStats();
    const cold = await fresh.summaries.search('mu-long', wanted);
    const coldBytes = local.stats().responseBytes;
    expect(cold[0]?.summary.sessionId).toBe('long-123');

    local.resetStats();
    const warm = await fresh.summaries.search('mu-long', wanted);
    const warmStats = local.stats();
    expect(warm).toEqual(cold);
    // The candidate query (and the SDK's query plan beside it): no summary is read again.
    expect(warmStats.requests).toBeLessThanOrEqual(2);
    expect(warmStats.responseBytes * 10).toBeLessThan(coldBytes);
  });

  it("reads back its own write without the body, and another writer's change whole", async () => {
    await stores.summaries.put(summaryOf('mu-own', 'own-1', 'first words'), undefined);
    const first = await stores.summaries.get('mu-own', 'own-1');
    await stores.summaries.put({ ...first!.summary, summary: 'second words', exchanges: 2 }, first!.version);

    local.resetStats();
    const own = await stores.summaries.get('mu-own', 'own-1');
    // One conditional read answered "not modified": the worker's next turn re-reads nothing of its own write.
    expect(local.stats().requests).toBe(1);
    expect(local.stats().responseBytes).toBe(0);
    expect(own?.summary).toMatchObject({ summary: 'second words', exchanges: 2 });

    // Another process writes: this one's next read is the new version, whole.
    const other = createMemoryStores(database, { ranking: 'in-process' });
    const theirs = await other.summaries.get('mu-own', 'own-1');
    expect(await other.summaries.put({ ...theirs!.summary, summary: 'third words' }, theirs!.version)).toBe(
      'written',
    );
    const fresh = await stores.summaries.get('mu-own', 'own-1');
    expect(fresh?.summary.summary).toBe('third words');
    expect(await stores.summaries.put({ ...own!.summary, summary: 'stale' }, own!.version)).toBe('conflict');
  });

  it('deletes all of a user’s summaries and only theirs', async () => {
    await stores.summaries.put(summaryOf('mu-del', 'd-1', 'one'), undefined);
    await stores.summaries.put(summaryOf('mu-del', 'd-2', 'two'), undefined);
    await stores.summaries.put(summaryOf('mu-keep', 'd-1', 'kept'), undefined);
    expect(await stores.summaries.deleteAll('mu-del')).toBe(2);
    expect(await stores.summaries.deleteAll('mu-del')).toBe(0);
    expect((await stores.summaries.list('mu-del', { limit: 10 })).summaries).toEqual([]);
    expect(await stores.summaries.search('mu-del', query('one two'))).toEqual([]);
    expect(await stores.summaries.get('mu-keep', 'd-1')).toBeDefined();
  });

  it('stores the document in the summaries container under the user’s partition, id = sessionId', async () => {
    await stores.summaries.put(summaryOf('mu-raw', 'raw-1', 'raw'), undefined);
    const { resource } = await database
      .container(CONVERSATION_SUMMARIES_CONTAINER)
      .item('raw-1', 'mu-raw')
      .read();
    expect(resource).toMatchObject({ id: 'raw-1', userId: 'mu-raw', kind: 'conversation-summary' });
  });
});

describe('Cosmos DB profile facts', () => {
  it('creates, gets and lists facts oldest first, by status when asked', async () => {
    await storeFacts(
      stores.facts,
      factOf('pu-1', 'f-b', { createdAt: at(2) }),
      factOf('pu-1', 'f-a', { createdAt: at(1), status: 'superseded', supersededBy: 'f-b' }),
      factOf('pu-1', 'f-c', { createdAt: at(2), status: 'retracted' }),
      factOf('pu-2', 'f-a'),
    );

    expect((await stores.facts.list('pu-1')).map((fact) => fact.id)).toEqual(['f-a', 'f-b', 'f-c']);
    expect((await stores.facts.list('pu-1', { statuses: ['active'] })).map((fact) => fact.id)).toEqual([
      'f-b',
    ]);
    expect(
      (await stores.facts.list('pu-1', { statuses: ['superseded', 'retracted'] })).map((fact) => fact.id),
    ).toEqual(['f-a', 'f-c']);
    expect(await stores.facts.list('pu-1', { statuses: [] })).toEqual([]);
    expect((await stores.facts.get('pu-1', 'f-a'))?.fact).toMatchObject({
      status: 'superseded',
      supersededBy: 'f-b',
    });
    expect(await stores.facts.get('pu-3', 'f-a')).toBeUndefined();

    expect(await stores.facts.delete('pu-1', 'f-b')).toBe(true);
    expect(await stores.facts.delete('pu-1', 'f-b')).toBe(false);
    expect(await stores.facts.get('pu-2', 'f-a')).toBeDefined();
  });

  it('writes a fact only on the version read: created if absent, replaced or deleted if unchanged', async () => {
    const fact = factOf('pu-v', 'f-1');
    expect(await stores.facts.put(fact, undefined)).toBe('written');
    // Another writer created it first.
    expect(await stores.facts.put({ ...fact, statement: 'Second creator' }, undefined)).toBe('conflict');

    const read = await stores.facts.get('pu-v', 'f-1');
    expect(read?.fact).toEqual(fact);
    const version = read!.version;
    expect(await stores.facts.put({ ...fact, statement: 'Changed' }, version)).toBe('written');
    const changed = await stores.facts.get('pu-v', 'f-1');
    expect(changed?.fact.statement).toBe('Changed');
    expect(changed?.version).not.toBe(version);
    // Written on a version another write has replaced since: refused, the other write stays.
    expect(await stores.facts.put({ ...fact, status: 'retracted' }, version)).toBe('conflict');
    expect(await stores.facts.delete('pu-v', 'f-1', version)).toBe(false);
    expect((await stores.facts.get('pu-v', 'f-1'))?.fact).toMatchObject({
      statement: 'Changed',
      status: 'active',
    });
    expect(await stores.facts.list('pu-v')).toHaveLength(1);

    expect(await stores.facts.delete('pu-v', 'f-1', changed!.version)).toBe(true);
    // Gone meanwhile: a replace does not bring it back.
    expect(await stores.facts.put(fact, changed!.version)).toBe('conflict');
    expect(await stores.facts.delete('pu-v', 'f-1', changed!.version)).toBe(false);
    expect(await stores.facts.get('pu-v', 'f-1')).toBeUndefined();
  });

  it('finds the facts one of whose sources is in a session', async () => {
    const source = (sessionId: string, chatMessageId: string) => ({
      sessionId,
      chatMessageId,
      messageId: `${chatMessageId}_user`,
      at: at(0),
    });
    await storeFacts(
      stores.facts,
      factOf('pu-s', 'only-1', { provenance: [source('s-1', 'm-1')] }),
      factOf('pu-s', 'both', { provenance: [source('s-2', 'm-2'), source('s-1', 'm-3')] }),
      factOf('pu-s', 'only-2', { provenance: [source('s-2', 'm-4')], status: 'retracted' }),
      factOf('pu-t', 'theirs', { provenance: [source('s-1', 'm-1')] }),
    );

    expect((await stores.facts.fromSession('pu-s', 's-1')).map((fact) => fact.id).sort()).toEqual([
      'both',
      'only-1',
    ]);
    expect((await stores.facts.fromSession('pu-s', 's-2')).map((fact) => fact.id).sort()).toEqual([
      'both',
      'only-2',
    ]);
    expect(await stores.facts.fromSession('pu-s', 's-9')).toEqual([]);
  });

  it("reads a turn's consolidation start by point reads: its record, if any, and the active facts oldest first", async () => {
    await storeFacts(
      stores.facts,
      factOf('pu-start', 'f-b', { createdAt: at(2) }),
      factOf('pu-start', 'f-a', { createdAt: at(1) }),
      factOf('pu-start', 'f-c', { createdAt: at(3), status: 'retracted' }),
      factOf('pu-start2', 'f-d'),
    );
    await stores.facts.createConsolidation(recordOf('pu-start', 's-1', 'm-0', 'Run a marathon'));
    local.resetStats();
    const before = await stores.facts.consolidationStart('pu-start', 's-1', 'm-1');
    expect(local.stats().byContainer).toEqual({
      [`${PROFILE_FACTS_CONTAINER} item.read`]: expect.objectContaining({ requests: 2 }),
    });
    expect(before.record).toBeUndefined();
    expect(before.active.map((fact) => fact.id)).toEqual(['f-a', 'f-b']);
    const record = await stores.facts.createConsolidation(
      recordOf('pu-start', 's-1', 'm-1', 'Learn to sail'),
    );
    const after = await stores.facts.consolidationStart('pu-start', 's-1', 'm-1');
    expect(after).toEqual({ record, active: before.active });
    // A turn consolidated for the first time: one point read, of the active facts alone.
    local.resetStats();
    expect(await stores.facts.consolidationStart('pu-start', 's-1', 'm-1', { record: false })).toEqual({
      record: undefined,
      active: before.active,
    });
    expect(local.stats().requests).toBe(1);
  });

  it('keeps the active facts read in one point read in step with every fact write, and makes it for an older profile', async () => {
    const active = async (userId: string) =>
      (await stores.facts.consolidationStart(userId, 's-1', 'm-1', { record: false })).active.map(
        (fact) => `${fact.id}:${fact.statement}`,
      );
    // A profile stored before the copy existed: its facts are items alone. The first read queries them and makes
    // the copy; later ones read it.
    const container = database.container(PROFILE_FACTS_CONTAINER);
    for (const fact of [factOf('pu-copy', 'f-1'), factOf('pu-copy', 'f-2', { status: 'retracted' })])
      await container.items.create(fact);
    local.resetStats();
    expect(await active('pu-copy')).toEqual(['f-1:Statement f-1']);
    expect(local.stats().byContainer).toMatchObject({
      [`${PROFILE_FACTS_CONTAINER} item.query`]: expect.anything(),
    });
    local.resetStats();
    expect(await active('pu-copy')).toEqual(['f-1:Statement f-1']);
    expect(local.stats().byContainer).toEqual({
      [`${PROFILE_FACTS_CONTAINER} item.read`]: expect.objectContaining({ requests: 1 }),
    });

    // Written, changed, made inactive, deleted: the copy follows each write (one request each), and a write that
    // loses to another changes neither.
    local.resetStats();
    expect(await stores.facts.put(factOf('pu-copy', 'f-3', { createdAt: at(3) }), undefined)).toBe('written');
    expect(local.stats().requests).toBe(1);
    expect(await stores.facts.put(factOf('pu-copy', 'f-3', { statement: 'Twice' }), undefined)).toBe(
      'conflict',
    );
    const stored = await stores.facts.get('pu-copy', 'f-1');
    expect(await stores.facts.put({ ...stored!.fact, statement: 'Changed' }, stored!.version)).toBe(
      'written',
    );
    expect(await stores.facts.put({ ...stored!.fact, statement: 'Stale' }, stored!.version)).toBe('conflict');
    expect(await active('pu-copy')).toEqual(['f-1:Changed', 'f-3:Statement f-3']);
    const changed = await stores.facts.get('pu-copy', 'f-1');
    expect(await stores.facts.put({ ...changed!.fact, status: 'retracted' }, changed!.version)).toBe(
      'written',
    );
    expect(await stores.facts.delete('pu-copy', 'f-3')).toBe(true);
    expect(await stores.facts.delete('pu-copy', 'f-3')).toBe(false);
    expect(await active('pu-copy')).toEqual([]);
    expect((await stores.facts.list('pu-copy')).map((fact) => fact.id)).toEqual(['f-1', 'f-2']);

    // A user's first fact makes the copy with its write.
    expect(await stores.facts.put(factOf('pu-copy-new', 'f-1'), undefined)).toBe('written');
    local.resetStats();
    expect(await active('pu-copy-new')).toEqual(['f-1:Statement f-1']);
    expect(local.stats().requests).toBe(1);
  });

  it('creates a consolidation record once: a second create returns the first', async () => {
    const first = recordOf('pu-c', 's-1', 'm-1', 'Run a marathon');
    expect(await stores.facts.getConsolidation('pu-c', 's-1', 'm-1')).toBeUndefined();
    expect(await stores.facts.createConsolidation(first)).toEqual(first);
    const again = recordOf('pu-c', 's-1', 'm-1', 'A different decision');
    expect(await stores.facts.createConsolidation(again)).toEqual(first);
    expect(await stores.facts.getConsolidation('pu-c', 's-1', 'm-1')).toEqual(first);
    // A record is not a fact: neither read nor listed nor deleted as one.
    expect(await stores.facts.get('pu-c', first.id)).toBeUndefined();
    expect(await stores.facts.list('pu-c')).toEqual([]);
    expect(await stores.facts.delete('pu-c', first.id)).toBe(false);
    expect(await stores.facts.getConsolidation('pu-other', 's-1', 'm-1')).toBeUndefined();

    await stores.facts.markApplied('pu-c', first.id, at(5));
    expect(await stores.facts.getConsolidation('pu-c', 's-1', 'm-1')).toEqual({ ...first, appliedAt: at(5) });
    const summaryAfter = {
      summary: 'Talked about running.',
      themes: ['running'],
      persons: [],
      places: [],
      user_sentiment: 'positive' as const,
      exchanges: 1,
    };
    await stores.facts.markApplied('pu-c', first.id, at(6), summaryAfter);
    expect(await stores.facts.getConsolidation('pu-c', 's-1', 'm-1')).toEqual({
      ...first,
      appliedAt: at(6),
      summaryAfter,
    });
    // Applied, the record stays while its conversation does (a branch may come back to its turn): no expiry.
    const { resource: stored } = await database
      .container(PROFILE_FACTS_CONTAINER)
      .item(first.id, 'pu-c')
      .read<{ ttl?: number }>();
    expect(stored?.ttl).toBeUndefined();
    await stores.facts.markApplied('pu-c', consolidationId('s-1', 'gone'), at(5)); // nothing to mark: no failure
  });

  it('marks a record withdrawn and applied again, each as often as it comes', async () => {
    const record = recordOf('pu-w', 's-1', 'm-1', 'Learn Greek');
    await stores.facts.createConsolidation(record);
    await stores.facts.markWithdrawn('pu-w', record.id, undefined); // not withdrawn: nothing to take back
    expect(await stores.facts.getConsolidation('pu-w', 's-1', 'm-1')).toEqual(record);
    await stores.facts.markWithdrawn('pu-w', record.id, at(7));
    await stores.facts.markWithdrawn('pu-w', record.id, at(7));
    expect(await stores.facts.getConsolidation('pu-w', 's-1', 'm-1')).toEqual({
      ...record,
      withdrawnAt: at(7),
    });
    await stores.facts.markWithdrawn('pu-w', record.id, undefined);
    await stores.facts.markWithdrawn('pu-w', record.id, undefined);
    expect(await stores.facts.getConsolidation('pu-w', 's-1', 'm-1')).toEqual(record);
    await stores.facts.markWithdrawn('pu-w', consolidationId('s-1', 'gone'), at(7)); // gone: no failure
  });

  it("finds a session's records by their place on a path, as the in-memory fake does", async () => {
    const fake = new MemoryProfileFacts();
    const summaryAfter = {
      summary: 'S',
      themes: [],
      persons: [],
      places: [],
      user_sentiment: 'neutral' as const,
      exchanges: 1,
    };
    const records = [0, 2, 4, 6, 8].map((ordinal) => {
      const record = recordOf('pu-p', 's-1', `m-${ordinal}`, `Goal ${ordinal}`);
      return {
        ...record,
        source: { ...record.source, ordinal },
        ...(ordinal === 2 ? { changes: [] } : {}),
        ...(ordinal === 4 ? { withdrawnAt: at(4) } : {}),
        ...(ordinal <= 4 ? { summaryAfter } : {}),
      };
    });
    // One without an ordinal (consolidated before branches existed), one of another session, one of another user.
    const unplaced = recordOf('pu-p', 's-1', 'm-old', 'Old');
    const elsewhere = { ...recordOf('pu-p', 's-2', 'm-0', 'x'), source: { ...unplaced.source, ordinal: 0 } };
    const theirs = { ...recordOf('pu-q', 's-1', 'm-0', 'x'), source: { ...unplaced.source, ordinal: 0 } };
    for (const store of [stores.facts, fake])
      for (const record of [...records, unplaced, elsewhere, theirs]) await store.createConsolidation(record);

    const cases: ConsolidationQuery[] = [
      { before: 100, order: 'asc' },
      { before: 6, order: 'desc' },
      {
        before: 100,
        within: [
          { from: 2, to: 5 },
          { from: 8, to: 9 },
        ],
        order: 'asc',
      },
      { before: 100, within: [], order: 'asc' },
      { before: 100, outside: [{ from: 2, to: 7 }], order: 'asc' },
      { before: 100, withdrawn: true, order: 'asc' },
      { before: 100, withdrawn: false, changed: true, order: 'desc' },
      { before: 7, outside: [{ from: 4, to: 6 }], summarised: true, order: 'desc', limit: 1 },
    ];
    const expected = [[0, 2, 4, 6, 8], [4, 2, 0], [2, 4, 8], [], [0, 8], [4], [8, 6, 0], [2]];
    for (const [i, query] of cases.entries()) {
      const found = await stores.facts.findConsolidations('pu-p', 's-1', query);
      expect(
        found.map((record) => record.source.ordinal),
        JSON.stringify(query),
      ).toEqual(expected[i]);
      expect(found, JSON.stringify(query)).toEqual(await fake.findConsolidations('pu-p', 's-1', query));
    }
  });

  it('finds the records naming a fact, as a change or a replacement, and rewrites their changes', async () => {
    const adds = recordOf('pu-n', 's-1', 'm-1', 'Learn Greek');
    const replaces = {
      ...recordOf('pu-n', 's-2', 'm-2', 'x'),
      changes: [
        {
          op: 'replace' as const,
          factId: 'old',
          newFactId: 'f-m-1',
          category: 'goals' as const,
          statement: 'x',
          reason: 'r',
        },
      ],
    };
    const other = recordOf('pu-n', 's-1', 'm-3', 'Other');
    const theirs = recordOf('pu-o', 's-1', 'm-1', 'Theirs');
    for (const record of [adds, replaces, other, theirs]) await stores.facts.createConsolidation(record);
    const ids = async (factId: string) =>
      (await stores.facts.consolidationsChanging('pu-n', factId)).map((record) => record.id).sort();
    expect(await ids('f-m-1')).toEqual([adds.id, replaces.id].sort());
    expect(await ids('old')).toEqual([replaces.id]);
    expect(await ids('nothing')).toEqual([]);

    await stores.facts.setChanges('pu-n', adds.id, []);
    expect(await stores.facts.getConsolidation('pu-n', 's-1', 'm-1')).toEqual({ ...adds, changes: [] });
    expect(await ids('f-m-1')).toEqual([replaces.id]);
    await stores.facts.setChanges('pu-n', consolidationId('s-1', 'gone'), []); // gone: no failure
  });

  it("deletes a session's records, then everything of the user, and only theirs", async () => {
    await stores.facts.createConsolidation(recordOf('pu-d', 's-1', 'm-1', 'one'));
    await stores.facts.createConsolidation(recordOf('pu-d', 's-1', 'm-2', 'two'));
    await stores.facts.createConsolidation(recordOf('pu-d', 's-2', 'm-3', 'three'));
    await stores.facts.createConsolidation(recordOf('pu-e', 's-1', 'm-1', 'theirs'));
    await storeFacts(stores.facts, factOf('pu-d', 'f-1'));

    expect(await stores.facts.deleteConsolidations('pu-d', 's-1')).toBe(2);
    expect(await stores.facts.deleteConsolidations('pu-d', 's-1')).toBe(0);
    expect(await stores.facts.getConsolidation('pu-d', 's-2', 'm-3')).toBeDefined();
    expect(await stores.facts.getConsolidation('pu-e', 's-1', 'm-1')).toBeDefined();

    // The fact, the other session's record, and the copy of the active facts.
    expect(await stores.facts.deleteAll('pu-d')).toBe(3);
    expect(await stores.facts.list('pu-d')).toEqual([]);
    expect(await stores.facts.getConsolidation('pu-d', 's-2', 'm-3')).toBeUndefined();
    expect(await stores.facts.getConsolidation('pu-e', 's-1', 'm-1')).toBeDefined();
  });
});
