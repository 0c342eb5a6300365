// A container that indexes only what its queries use still indexes everything they filter and sort on: each query
// the product sends to such a container (its adapters' and the erase's sweep of every container), and each query
// written in the adapters that serve it (a new one fails here until it is listed), reads indexed properties only.
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { cosmosContainers } from '../../shared/app/cosmos-containers.js';
import { sweepQuery } from '../../shared/app/user-eraser.js';
import { HOT_CONVERSATIONS_CONTAINER } from '../../shared/chat/contracts/documents.js';
import { LIST_QUERY } from '../../shared/conversation/adapters/cosmos-hot-store.js';
import { PARTITION_IDS_QUERY } from '../../shared/cosmos/adapters/cosmos-items.js';
import type { ContainerSpec } from '../../shared/cosmos/container-spec.js';
import { filteredProperties, indexingPaths, isIndexed } from '../../shared/cosmos/indexed-paths.js';
import { READ_QUERY } from '../../shared/streaming/adapters/cosmos-turn-event-store.js';
import { TURN_EVENTS_CONTAINER } from '../../shared/streaming/contracts.js';
import { USAGE_CONTAINER } from '../../shared/usage/contracts.js';

const root = path.resolve(import.meta.dirname, '../..');

/**
 * The usage ledger's: conversations' counters, records by day, a conversation's records (its detach), the months'
 * figures; and the anonymiser's records of a user.
 */
const USAGE_QUERIES = [
  "SELECT * FROM c WHERE c.type = 'conversation' AND ARRAY_CONTAINS(@keys, c.key)",
  "SELECT * FROM c WHERE c.type IN ('usage', 'call') AND c.day >= @from AND c.day <= @to",
  "SELECT c.id FROM c WHERE c.type IN ('usage', 'call') AND c.sessionId = @s",
  "SELECT c.turns, c.background FROM c WHERE c.type = 'month'",
  "SELECT * FROM c WHERE c.userId = @userId AND (c.type = 'usage' OR c.type = 'call')",
];

/** Each container that names its indexed paths: the adapters that query it, and every query sent to it. */
const QUERIED: Record<string, { adapters: string[]; queries: string[] }> = {
  [HOT_CONVERSATIONS_CONTAINER]: {
    adapters: ['shared/conversation/adapters/cosmos-hot-store.ts'],
    // The list of a session's entries by key prefix; the delete of a conversation's hot entries.
    queries: [LIST_QUERY, PARTITION_IDS_QUERY],
  },
  [TURN_EVENTS_CONTAINER]: {
    adapters: ['shared/streaming/adapters/cosmos-turn-event-store.ts'],
    // A turn's events after a seq, in order; the delete of a conversation's events.
    queries: [READ_QUERY, PARTITION_IDS_QUERY],
  },
  [USAGE_CONTAINER]: {
    adapters: ['shared/usage/adapters/cosmos-usage-ledger.ts', 'shared/app/usage-anonymiser.ts'],
    queries: USAGE_QUERIES,
  },
};

const spec = (id: string): ContainerSpec => {
  const found = cosmosContainers.find((container) => container.id === id);
  if (found === undefined) throw new Error(`no container ${id}`);
  return found;
};

describe('the containers that index only what their queries use', () => {
  it('are the ones listed here, each with its queries', () => {
    const restricted = cosmosContainers.filter((container) => container.indexedPaths !== undefined);
    expect(restricted.map((container) => container.id).sort()).toEqual(Object.keys(QUERIED).sort());
  });

  for (const [id, { adapters, queries }] of Object.entries(QUERIED)) {
    it(`${id}: every query filters and sorts on indexed properties`, () => {
      // An erased account's items are swept from every container by who they name.
      for (const query of [...queries, sweepQuery(id)]) {
        const read = filteredProperties(query);
        for (const property of read)
          expect(isIndexed(spec(id), property), `${property} in ${query}`).toBe(true);
      }
      // The queries do read something: a parser that found nothing would pass any policy.
      expect(queries.flatMap(filteredProperties).length).toBeGreaterThan(0);
    });

    it(`${id}: its adapters send no query beyond those checked`, async () => {
      for (const adapter of adapters) {
        const source = await readFile(path.join(root, adapter), 'utf8');
        const written = [
          ...source.matchAll(/'(SELECT [^']*)'/g),
          ...source.matchAll(/"(SELECT [^"]*)"/g),
          ...source.matchAll(/`(SELECT [^`]*)`/g),
        ].map((match) => match[1]);
        expect(written.length, adapter).toBeGreaterThan(0);
        for (const query of written) expect(queries, `${adapter}: ${query}`).toContain(query);
      }
    });
  }
});

describe('indexing paths', () => {
  const restricted: ContainerSpec = {
    id: 'restricted',
    partitionKeyPaths: ['/sessionId'],
    indexedPaths: ['/sessionId', '/seq'],
    purpose: 'test',
  };
  const open: ContainerSpec = {
    id: 'open',
    partitionKeyPaths: ['/userId'],
    unindexedPaths: ['/content'],
    vectorEmbeddings: [{ path: '/embedding', dataType: 'float32', distanceFunction: 'cosine' }],
    purpose: 'test',
  };

  it('index only the named paths of a restricted container, and the system ones', () => {
    expect(indexingPaths(restricted)).toEqual({
      included: ['/sessionId/?', '/seq/?'],
      excluded: ['/*'],
    });
    expect(isIndexed(restricted, '/sessionId')).toBe(true);
    expect(isIndexed(restricted, '/seq')).toBe(true);
    expect(isIndexed(restricted, '/id')).toBe(true);
    expect(isIndexed(restricted, '/messages')).toBe(false);
    expect(isIndexed(restricted, '/seq/inner')).toBe(false);
  });

  it('index everything else but the excluded paths of an open container', () => {
    expect(indexingPaths(open)).toEqual({ included: ['/*'], excluded: ['/embedding/*', '/content/?'] });
    expect(isIndexed(open, '/title')).toBe(true);
    expect(isIndexed(open, '/a/b')).toBe(true);
    expect(isIndexed(open, '/content')).toBe(false);
    expect(isIndexed(open, '/embedding/0')).toBe(false);
  });

  it('read the properties of WHERE and ORDER BY, not of the projection', () => {
    expect(
      filteredProperties(
        'SELECT c.events FROM c WHERE c.sessionId = @s AND c.lastSeq > @a ORDER BY c.first.seq',
      ).sort(),
    ).toEqual(['/first/seq', '/lastSeq', '/sessionId']);
    expect(filteredProperties('SELECT VALUE c.id FROM c')).toEqual([]);
  });
});
