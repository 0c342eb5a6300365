// Contract tests of the knowledge area's Cosmos DB adapters against the local Cosmos DB with the real
// @azure/cosmos client: port semantics, conditional writes, the list, and search over ready documents only.
import { createHash } from 'node:crypto';
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
import {
  createKnowledgeStores,
  type KnowledgeStores,
} from '../../shared/knowledge/adapters/knowledge-adapters.js';
import {
  chunkId,
  KNOWLEDGE_CHUNKS_CONTAINER,
  KNOWLEDGE_DOCUMENTS_CONTAINER,
  KNOWLEDGE_UPLOADS_CONTAINER,
  knowledgeContainers,
  privateLibrary,
  searchableLibraries,
  SHARED_LIBRARY,
  UPLOAD_PART_BYTES,
  uploadPartId,
  type DocumentStatus,
  type KnowledgeChunk,
  type KnowledgeDocument,
} from '../../shared/knowledge/contracts.js';
import type { FullTextMode } from '../../shared/search/full-text.js';
import { EVERY_HIT } from '../support/search-relevance.js';

const DIMENSIONS = 64;

let local: LocalCosmos;
let client: CosmosClient;
let database: Database;
/** One store per ranking mode; the local server answers Cosmos DB's search functions (test-only). */
const stores = {} as Record<FullTextMode, KnowledgeStores>;
const MODES: FullTextMode[] = ['in-process', 'cosmos'];

beforeAll(async () => {
  local = await startLocalCosmos({ searchFunctions: true });
  client = createLocalCosmosClient(local);
  await provisionCosmos(client, COSMOS_DATABASE, cosmosContainers);
  database = client.database(COSMOS_DATABASE);
  for (const ranking of MODES) stores[ranking] = createKnowledgeStores(database, { ranking });
});

/**
 * A database of its own with the knowledge containers, and its stores in both modes: a search ranks every chunk of
 * the libraries it reads (the vector rank has no threshold), so each search test needs a shared library of its own.
 */
let databases = 0;
async function freshStores(): Promise<Record<FullTextMode, KnowledgeStores> & { database: Database }> {
  const id = `knowledge-${++databases}`;
  await provisionCosmos(client, id, knowledgeContainers);
  const fresh = client.database(id);
  return {
    database: fresh,
    'in-process': createKnowledgeStores(fresh, { ranking: 'in-process' }),
    cosmos: createKnowledgeStores(fresh, { ranking: 'cosmos' }),
  };
}

afterAll(async () => {
  client?.dispose();
  await local?.stop();
});

const at = (minute: number) => new Date(Date.UTC(2025, 0, 1, 0, minute)).toISOString();

/** A document id (32 hex) named by a word, as documentIdFor would make one from content. */
const idOf = (name: string) => createHash('sha256').update(name).digest('hex').slice(0, 32);

function documentOf(
  library: string,
  name: string,
  extra: Partial<KnowledgeDocument> = {},
): KnowledgeDocument {
  const documentId = idOf(name);
  return {
    id: documentId,
    kind: 'knowledge-document',
    library,
    documentId,
    ownerId: library.startsWith('private:') ? library.slice('private:'.length) : 'librarian',
    title: `Document ${name}`,
    titleGiven: true,
    fileName: `${name}.md`,
    format: 'markdown',
    mediaType: 'text/markdown',
    contentHash: createHash('sha256').update(name).digest('hex'),
    bytes: 100,
    parts: 1,
    status: 'queued',
    attempt: 1,
    createdAt: at(0),
    updatedAt: at(0),
    ...extra,
  };
}

function chunksOf(document: KnowledgeDocument, texts: readonly string[]): KnowledgeChunk[] {
  return texts.map((text, index) => ({
    id: chunkId(document.documentId, index),
    kind: 'knowledge-chunk',
    library: document.library,
    documentId: document.documentId,
    title: document.title,
    index,
    text,
    headings: index === 0 ? [] : ['Section'],
    ...(document.format === 'pdf' ? { pages: [index + 1] } : {}),
    tokens: text.split(' ').length,
    embedding: hashedEmbedding(text, DIMENSIONS),
  }));
}

/** A document with its chunks stored and its record at `status` (created queued, then changed as the worker does). */
async function indexed(
  target: KnowledgeStores,
  document: KnowledgeDocument,
  texts: readonly string[],
  status: DocumentStatus = 'ready',
): Promise<KnowledgeDocument> {
  expect(await target.documents.create(document)).toBe('created');
  await target.chunks.put(chunksOf(document, texts));
  if (status !== document.status) await setStatus(target, document, status);
  return document;
}

async function setStatus(target: KnowledgeStores, document: KnowledgeDocument, status: DocumentStatus) {
  const stored = await target.documents.get(document.library, document.documentId);
  expect(stored).toBeDefined();
  expect(await target.documents.replace({ ...stored!.document, status }, stored!.version)).toBe('written');
}

const search = (target: KnowledgeStores, userId: string, text: string, limit = 10) =>
  target.chunks.search({
    libraries: searchableLibraries(userId),
    text,
    vector: hashedEmbedding(text, DIMENSIONS),
    relevance: EVERY_HIT,
    limit,
  });

describe('the knowledge containers', () => {
  it('take ids never declared with other partition keys, so an environment deployed before can be updated', () => {
    // Declared before keyed by /ownerId (documents) and /ownerId, /documentId (chunks); keys cannot change.
    const earlier = ['knowledge-documents', 'knowledge-chunks'];
    const byId = new Map(knowledgeContainers.map((spec) => [spec.id, spec.partitionKeyPaths]));
    expect(byId.get(KNOWLEDGE_DOCUMENTS_CONTAINER)).toEqual(['/library']);
    expect(byId.get(KNOWLEDGE_CHUNKS_CONTAINER)).toEqual(['/library', '/documentId']);
    for (const id of [KNOWLEDGE_DOCUMENTS_CONTAINER, KNOWLEDGE_CHUNKS_CONTAINER])
      expect(earlier).not.toContain(id);
  });
});

describe('Cosmos DB knowledge documents', () => {
  const documents = () => stores['in-process'].documents;

  it('creates a record once, then replaces it only at the version read', async () => {
    const library = privateLibrary('ku-1');
    const first = documentOf(library, 'handbook');
    expect(await documents().create(first)).toBe('created');
    // The same content uploaded again: the record is there, untouched.
    expect(await documents().create({ ...first, title: 'Another title' })).toBe('exists');
    const stored = await documents().get(library, first.documentId);
    expect(stored?.document).toEqual(first);
    // Another library is another partition: not found there.
    expect(await documents().get(SHARED_LIBRARY, first.documentId)).toBeUndefined();

    const processing = { ...first, status: 'processing' as const, updatedAt: at(1) };
    expect(await documents().replace(processing, stored!.version)).toBe('written');
    // The version read before that write is stale: a late writer loses instead of overwriting.
    expect(await documents().replace({ ...first, status: 'failed' }, stored!.version)).toBe('conflict');
    const current = await documents().get(library, first.documentId);
    expect(current?.document.status).toBe('processing');
    expect(current?.version).not.toBe(stored?.version);

    expect(await documents().delete(library, first.documentId)).toBe(true);
    // Deleted meanwhile: a write at the old version does not bring it back.
    expect(await documents().replace(processing, current!.version)).toBe('conflict');
    expect(await documents().get(library, first.documentId)).toBeUndefined();
    expect(await documents().delete(library, first.documentId)).toBe(false);
  });

  it('lists a library newest first in pages, without documents being deleted, filtered by owner', async () => {
    const library = 'list-library';
    for (let i = 0; i < 7; i++)
      await documents().create(
        documentOf(library, `list-${i}`, {
          ownerId: i % 2 === 0 ? 'even' : 'odd',
          createdAt: at(i),
          status: i === 3 ? 'deleting' : i === 5 ? 'failed' : 'ready',
        }),
      );
    await documents().create(documentOf('other-library', 'list-elsewhere', { createdAt: at(9) }));

    const all = await readAll(library, {});
    expect(all.map((document) => document.documentId)).toEqual(
      [6, 5, 4, 2, 1, 0].map((i) => idOf(`list-${i}`)),
    );
    expect(all[1]?.status).toBe('failed');
    const even = await readAll(library, { ownerId: 'even' });
    expect(even.map((document) => document.documentId)).toEqual([6, 4, 2, 0].map((i) => idOf(`list-${i}`)));

    const first = await documents().list(library, { limit: 2 });
    expect(first.documents).toHaveLength(2);
    expect(first.continuationToken).toBeDefined();
    // The token is bound to its library and owner filter: another list refuses it.
    await expect(
      documents().list('other-library', { limit: 2, continuationToken: first.continuationToken! }),
    ).rejects.toBeInstanceOf(ValidationError);
    await expect(
      documents().list(library, { ownerId: 'even', limit: 2, continuationToken: first.continuationToken! }),
    ).rejects.toBeInstanceOf(ValidationError);
    await expect(
      documents().list(library, { limit: 2, continuationToken: 'not-a-token' }),
    ).rejects.toBeInstanceOf(ValidationError);
    expect(await documents().list('empty-library', { limit: 5 })).toEqual({ documents: [] });
  });
});

/** Every page of a list, following its tokens in pages of 2. */
async function readAll(library: string, filter: { ownerId?: string }): Promise<KnowledgeDocument[]> {
  const listed: KnowledgeDocument[] = [];
  let token: string | undefined;
  do {
    const page = await stores['in-process'].documents.list(library, {
      ...filter,
      limit: 2,
      ...(token ? { continuationToken: token } : {}),
    });
    expect(page.documents.length).toBeLessThanOrEqual(2);
    listed.push(...page.documents);
    token = page.continuationToken;
  } while (token !== undefined);
  return listed;
}

describe('Cosmos DB knowledge chunks', () => {
  it('writes chunks idempotently and removes them from an index on', async () => {
    const target = (await freshStores())['in-process'];
    const document = documentOf(privateLibrary('ku-put'), 'put', { status: 'processing' });
    const texts = ['alpha one', 'alpha two', 'alpha three', 'alpha four', 'alpha five'];
    await indexed(target, document, texts, 'processing');
    // Written again (a redelivered ingestion): the same five chunks, not ten.
    await target.chunks.put(chunksOf(document, texts));
    await setStatus(target, document, 'ready');
    expect(await search(target, 'ku-put', 'alpha')).toHaveLength(5);

    // The leftovers of an earlier, longer attempt: from index 3 on.
    expect(await target.chunks.remove(document.library, document.documentId, 3)).toBe(2);
    const left = await search(target, 'ku-put', 'alpha');
    expect(left.map((match) => match.chunk.index).sort()).toEqual([0, 1, 2]);
    expect(await target.chunks.remove(document.library, document.documentId, 3)).toBe(0);
    expect(await target.chunks.remove(document.library, document.documentId)).toBe(3);
    expect(await search(target, 'ku-put', 'alpha')).toEqual([]);
    expect(await target.chunks.remove(document.library, document.documentId)).toBe(0);
  });

  it("removes one document's chunks, never another's", async () => {
    const target = (await freshStores())['in-process'];
    const library = privateLibrary('ku-two');
    const one = await indexed(target, documentOf(library, 'two-a'), ['gamma first', 'gamma second']);
    await indexed(target, documentOf(library, 'two-b'), ['gamma third']);
    // The same document id in another library (the id is unique per library only, here).
    await indexed(target, { ...documentOf(SHARED_LIBRARY, 'two-a') }, ['gamma shared']);
    expect(await target.chunks.remove(library, one.documentId)).toBe(2);
    const left = await search(target, 'ku-two', 'gamma');
    expect(left.map((match) => match.chunk.text).sort()).toEqual(['gamma shared', 'gamma third']);
  });

  describe.each(MODES)('search ranked %s', (ranking) => {
    it("finds only chunks of ready documents in the caller's libraries, with the chunk as stored", async () => {
      const target = (await freshStores())[ranking];
      const user = 'ku-search';
      const mine = privateLibrary(user);
      const ready = await indexed(target, documentOf(mine, 'ready', { format: 'pdf' }), [
        'Expense reports are due on the fifth of each month.',
        'Travel must be booked through the portal.',
      ]);
      // Chunks of documents that are not ready, each as the worker or a delete can leave them.
      await indexed(target, documentOf(mine, 'queued'), ['Expense policy draft, queued.'], 'queued');
      await indexed(target, documentOf(mine, 'processing'), ['Expense notes, processing.'], 'processing');
      await indexed(target, documentOf(mine, 'deleting'), ['Expense archive, deleting.'], 'deleting');
      // A failed document whose chunks outlived its record's mark (a worker stopped in between).
      await indexed(target, documentOf(mine, 'failed'), ['Expense claims, failed.'], 'failed');
      await indexed(target, documentOf(SHARED_LIBRARY, 'shared'), ['Shared expense guide for everyone.']);
      // Another user's private library: never searched for this user.
      await indexed(target, documentOf(privateLibrary('ku-other'), 'theirs'), [
        "Expense expense expense: the other user's secret.",
      ]);

      const found = await search(target, user, 'expense reports');
      // The best first; the order of the other two is hash collisions in these 64-dimension embeddings.
      expect(found[0]?.chunk.text).toBe('Expense reports are due on the fifth of each month.');
      expect(found.map((match) => match.chunk.text).sort()).toEqual([
        'Expense reports are due on the fifth of each month.',
        'Shared expense guide for everyone.',
        'Travel must be booked through the portal.',
      ]);
      expect(found[0]?.chunk).toEqual({
        id: chunkId(ready.documentId, 0),
        kind: 'knowledge-chunk',
        library: mine,
        documentId: ready.documentId,
        title: ready.title,
        index: 0,
        text: 'Expense reports are due on the fifth of each month.',
        headings: [],
        pages: [1],
        tokens: 10,
      });
      const withText = (text: string) => found.find((match) => match.chunk.text === text);
      const travel = withText('Travel must be booked through the portal.');
      expect(travel?.chunk.headings).toEqual(['Section']);
      expect(withText('Shared expense guide for everyone.')?.chunk).not.toHaveProperty('pages');
      found.slice(1).forEach((match, i) => expect(match.score).toBeLessThanOrEqual(found[i]!.score));
      expect(found[1]!.score).toBeLessThan(found[0]!.score);
      expect(found[0]?.similarity).toBeGreaterThan(travel!.similarity);
      // Limits: the best one only; none asked for; no library.
      expect(await search(target, user, 'expense reports', 1)).toEqual(found.slice(0, 1));
      expect(await search(target, user, 'expense reports', 0)).toEqual([]);
      expect(
        await target.chunks.search({
          libraries: [],
          text: 'expense',
          vector: hashedEmbedding('expense', DIMENSIONS),
          relevance: EVERY_HIT,
          limit: 5,
        }),
      ).toEqual([]);
      // The other user finds their own and the shared one, never this user's.
      const theirs = await search(target, 'ku-other', 'expense');
      expect(theirs.map((match) => match.chunk.library)).toEqual([
        privateLibrary('ku-other'),
        SHARED_LIBRARY,
      ]);
      // A user with nothing of their own: the shared library only.
      expect((await search(target, 'ku-nobody', 'expense')).map((match) => match.chunk.library)).toEqual([
        SHARED_LIBRARY,
      ]);
    });

    it('drops a document from the next search the moment it turns deleting, and finds it again re-indexed', async () => {
      const target = (await freshStores())[ranking];
      const library = privateLibrary('ku-delete');
      const document = await indexed(target, documentOf(library, 'delete'), [
        'Parking permits are renewed every January.',
        'Visitors park on level two.',
      ]);
      await indexed(target, documentOf(library, 'stays'), ['Bicycles go in the basement.']);
      expect(await search(target, 'ku-delete', 'parking permits')).toHaveLength(3);
      await setStatus(target, document, 'deleting');
      // Its chunks are all still stored: only the record changed.
      expect((await search(target, 'ku-delete', 'parking permits')).map((match) => match.chunk.text)).toEqual(
        ['Bicycles go in the basement.'],
      );

      // Ingested again (a failed document uploaded anew): other chunks, at a new record version.
      await target.chunks.remove(library, document.documentId);
      await setStatus(target, document, 'processing');
      await target.chunks.put(chunksOf(document, ['Parking permits now cost nothing.']));
      expect(await search(target, 'ku-delete', 'parking permits')).toHaveLength(1);
      await setStatus(target, document, 'ready');
      const again = await search(target, 'ku-delete', 'parking permits');
      expect(again.map((match) => match.chunk.text)).toEqual([
        'Parking permits now cost nothing.',
        'Bicycles go in the basement.',
      ]);
    });

    it('ranks by vector alone when the query has only stop words', async () => {
      const target = (await freshStores())[ranking];
      await indexed(target, documentOf(privateLibrary('ku-stop'), 'stop'), [
        'completely different words here',
        'the and of it',
      ]);
      const found = await search(target, 'ku-stop', 'the and of it', 1);
      expect(found.map((match) => match.chunk.text)).toEqual(['the and of it']);
      expect(found[0]?.similarity).toBeCloseTo(1, 5);
    });
  });

  it("reads each ready document's chunks once, then only the ready lists per search", async () => {
    const { database: fresh, 'in-process': writer } = await freshStores();
    const user = 'ku-cache';
    const library = privateLibrary(user);
    for (let d = 0; d < 5; d++)
      await indexed(
        writer,
        documentOf(library, `cache-${d}`),
        Array.from(
          { length: 30 },
          (_, i) => `Document ${d} paragraph ${i} about subject ${(d * 30 + i) % 11}`,
        ),
      );
    const reader = createKnowledgeStores(fresh, { ranking: 'in-process' }); // a new process: nothing cached
    const wanted = 'Document 3 paragraph 7 about subject 9';
    local.resetStats();
    const cold = await search(reader, user, wanted, 3);
    expect(cold[0]?.chunk.text).toBe(wanted);
    // One query per document, in its own partition (each with the query plan the SDK asks for beside it).
    expect(chunkQueries()).toBe(5 * 2);

    local.resetStats();
    const warm = await search(reader, user, wanted, 3);
    expect(warm).toEqual(cold);
    expect(chunkQueries()).toBe(0);
    // One ready-list query per library (and the query plan the SDK asks for beside each).
    expect(documentQueries()).toBeLessThanOrEqual(4);

    // A document whose record changed (a new version) has its chunks read again; the others do not.
    await setStatus(writer, documentOf(library, 'cache-2'), 'ready');
    local.resetStats();
    expect(await search(reader, user, wanted, 3)).toEqual(cold);
    expect(chunkQueries()).toBe(1 * 2);

    // A cache smaller than the library: the same answers, read anew.
    const small = createKnowledgeStores(fresh, { ranking: 'in-process', cachedChunks: 40 });
    expect(await search(small, user, wanted, 3)).toEqual(cold);
    local.resetStats();
    expect(await search(small, user, wanted, 3)).toEqual(cold);
    expect(chunkQueries()).toBeGreaterThanOrEqual(4 * 2);
  });

  it('ranks a document larger than the cache without evicting what the cache holds, reading it once a search', async () => {
    const { database: fresh, 'in-process': writer } = await freshStores();
    const user = 'ku-oversized';
    const library = privateLibrary(user);
    const paragraphs = (name: string, count: number) =>
      Array.from({ length: count }, (_, i) => `${name} paragraph ${i} on topic ${i % 7}`);
    await indexed(writer, documentOf(library, 'small-a'), paragraphs('Small a', 10));
    await indexed(writer, documentOf(library, 'small-b'), paragraphs('Small b', 10));
    const large = await indexed(writer, documentOf(library, 'large'), paragraphs('Large', 50), 'processing');
    const reader = createKnowledgeStores(fresh, { ranking: 'in-process', cachedChunks: 40 });
    // The small documents are cached first; then the large one, alone more than the capacity, turns ready.
    await search(reader, user, 'Small a paragraph 3', 3);
    await setStatus(writer, large, 'ready');
    const wanted = 'Large paragraph 42 on topic 0';
    local.resetStats();
    const first = await search(reader, user, wanted, 3);
    expect(first[0]?.chunk.text).toBe(wanted);
    expect(chunkQueries()).toBe(1 * 2);
    // The next search reads the large document again (it was not kept), and only it: the small ones stayed.
    local.resetStats();
    expect(await search(reader, user, wanted, 3)).toEqual(first);
    expect(chunkQueries()).toBe(1 * 2);
  });
});

/** Query requests on the chunks container since the stats were reset. */
function chunkQueries(): number {
  return local.stats().byContainer[`${KNOWLEDGE_CHUNKS_CONTAINER} item.query`]?.requests ?? 0;
}

/** Query requests on the documents container since the stats were reset. */
function documentQueries(): number {
  return local.stats().byContainer[`${KNOWLEDGE_DOCUMENTS_CONTAINER} item.query`]?.requests ?? 0;
}

describe('Cosmos DB knowledge uploads', () => {
  const uploads = () => stores['in-process'].uploads;

  it('keeps content in parts and gives it back whole, or not at all when a part is gone', async () => {
    const content = new Uint8Array(2 * UPLOAD_PART_BYTES + 12_345);
    for (let i = 0; i < content.length; i++) content[i] = (i * 7919) % 256;
    const documentId = idOf('upload-3');
    expect(await uploads().put(documentId, 1, content)).toBe(3);
    // Written again: the same parts.
    expect(await uploads().put(documentId, 1, content)).toBe(3);
    expectBytes(await uploads().get(documentId, 1, 3), content);

    // A slice of a larger buffer is stored as itself, not as its buffer.
    const framed = new Uint8Array(content.buffer, 100, 1_000);
    const small = idOf('upload-1');
    expect(await uploads().put(small, 1, framed)).toBe(1);
    expectBytes(await uploads().get(small, 1, 1), content.slice(100, 1_100));

    // A part gone (expired): nothing is given back.
    await database
      .container(KNOWLEDGE_UPLOADS_CONTAINER)
      .item(uploadPartId(documentId, 1, 1), documentId)
      .delete();
    expect(await uploads().get(documentId, 1, 3)).toBeUndefined();
    // Removing skips the part already gone; then nothing is left.
    await uploads().remove(documentId, 1, 3);
    await uploads().remove(documentId, 1, 3);
    expect(await uploads().get(documentId, 1, 3)).toBeUndefined();
    expectBytes(await uploads().get(small, 1, 1), content.slice(100, 1_100));
    expect(await uploads().get(idOf('never-uploaded'), 1, 1)).toBeUndefined();
  });

  it("keeps each attempt's bytes apart: removing an earlier attempt's leaves the next one's", async () => {
    const documentId = idOf('upload-attempts');
    const first = new Uint8Array(UPLOAD_PART_BYTES + 10).fill(1);
    const second = new Uint8Array(UPLOAD_PART_BYTES + 10).fill(2);
    expect(await uploads().put(documentId, 1, first)).toBe(2);
    expect(await uploads().put(documentId, 2, second)).toBe(2);
    expectBytes(await uploads().get(documentId, 1, 2), first);
    // A late run of attempt 1 removes its bytes: attempt 2's stay whole.
    await uploads().remove(documentId, 1, 2);
    expect(await uploads().get(documentId, 1, 2)).toBeUndefined();
    expectBytes(await uploads().get(documentId, 2, 2), second);
  });
});

/** Byte for byte (a deep equality of megabytes element by element takes seconds). */
function expectBytes(actual: Uint8Array | undefined, expected: Uint8Array): void {
  expect(actual).toBeInstanceOf(Uint8Array);
  expect(actual?.byteLength).toBe(expected.byteLength);
  expect(Buffer.from(actual!).equals(Buffer.from(expected))).toBe(true);
}
