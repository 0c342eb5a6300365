// Knowledge search's two paths agree.
import { createHash } from 'node:crypto';
import type { CosmosClient } from '@azure/cosmos';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import {
  createLocalCosmosClient,
  provisionCosmos,
  startLocalCosmos,
  type LocalCosmos,
} from '../../local/cosmos/local-cosmos.js';
import { hashedEmbedding } from '../../local/offline-model/hashed-embedding.js';
import { DependencyError } from '../../shared/errors.js';
import {
  createKnowledgeStores,
  type KnowledgeStores,
} from '../../shared/knowledge/adapters/knowledge-adapters.js';
import {
  chunkId,
  knowledgeContainers,
  privateLibrary,
  searchableLibraries,
  SHARED_LIBRARY,
  type DocumentStatus,
  type KnowledgeChunk,
  type KnowledgeDocument,
} from '../../shared/knowledge/contracts.js';
import type { Relevance } from '../../shared/search/relevance.js';
import { EVERY_HIT, OFFLINE_RELEVANCE } from '../support/search-relevance.js';
import { SeededRandom } from '../support/seeded-random.js';

/** The local runtime's LLM_EMBEDDING_DIMENSIONS default. */
const DIMENSIONS = 1536;
const DATABASE = 'knowledge-agreement';
const USER = 'agreement-user';
const OTHER = 'someone-else';

let local: LocalCosmos;
let plain: LocalCosmos;
let client: CosmosClient;
let plainClient: CosmosClient;
let cosmosRanked: KnowledgeStores;
let inProcess: KnowledgeStores;

const TOPICS = [
  'Expense reports are filed in the finance portal before the fifth of each month',
  'Travel to client sites is booked through the travel desk with manager approval',
  'Laptops are replaced every three years and returned to the IT service desk',
  'Parental leave lasts sixteen weeks and can be split into two periods',
  'The office opens at seven and the building closes at nine in the evening',
  'Passwords rotate every ninety days and must use a hardware security key',
  'Onboarding covers the handbook, security training and a buddy for the first month',
  'Remote work is allowed three days a week with a stipend for a desk and chair',
  'Incidents are reported to the on-call engineer and reviewed the next morning',
  'Training budgets cover conferences, books and online courses up to a yearly limit',
];
const DETAILS = [
  'Receipts must be kept for seven years.',
  'Exceptions need written approval.',
  'See the intranet page for the forms.',
  'Questions go to the people team.',
  'The policy was revised last spring.',
  'Contractors follow the same rules.',
];

interface Source {
  library: string;
  name: string;
  status: DocumentStatus;
  chunks: number;
  format?: 'pdf';
}

/** What the container holds: the user's and the shared library, with documents in every state, and another's. */
const SOURCES: Source[] = [
  { library: privateLibrary(USER), name: 'handbook', status: 'ready', chunks: 14, format: 'pdf' },
  { library: privateLibrary(USER), name: 'notes', status: 'ready', chunks: 6 },
  { library: privateLibrary(USER), name: 'draft', status: 'processing', chunks: 5 },
  { library: privateLibrary(USER), name: 'old', status: 'deleting', chunks: 4 },
  { library: SHARED_LIBRARY, name: 'policies', status: 'ready', chunks: 16, format: 'pdf' },
  { library: SHARED_LIBRARY, name: 'it-guide', status: 'ready', chunks: 8 },
  { library: SHARED_LIBRARY, name: 'queued', status: 'queued', chunks: 3 },
  // A failed document whose chunks outlived the mark (a worker stopped between the two): hidden all the same.
  { library: SHARED_LIBRARY, name: 'failed', status: 'failed', chunks: 3 },
  { library: privateLibrary(OTHER), name: 'secret', status: 'ready', chunks: 10 },
];
/** The chunks search may return: those of ready documents in the user's libraries. */
const SEARCHABLE = 14 + 6 + 16 + 8;

function corpus(): { documents: KnowledgeDocument[]; chunks: KnowledgeChunk[] } {
  const random = new SeededRandom(12);
  const pick = <T>(items: readonly T[]) => items[random.int(0, items.length - 1)] as T;
  const documents: KnowledgeDocument[] = [];
  const chunks: KnowledgeChunk[] = [];
  let firstText: string | undefined;
  SOURCES.forEach((source, n) => {
    const documentId = createHash('sha256')
      .update(`${source.library}\n${source.name}`)
      .digest('hex')
      .slice(0, 32);
    const timestamp = new Date(Date.UTC(2025, 0, 1, 0, n)).toISOString();
    documents.push({
      id: documentId,
      kind: 'knowledge-document',
      library: source.library,
      documentId,
      ownerId: source.library === SHARED_LIBRARY ? 'librarian' : source.library.slice('private:'.length),
      title: `The ${source.name}`,
      titleGiven: true,
      format: source.format ?? 'markdown',
      mediaType: source.format === 'pdf' ? 'application/pdf' : 'text/markdown',
      contentHash: documentId.repeat(2),
      bytes: 1_000,
      parts: 1,
      status: source.status,
      attempt: 1,
      createdAt: timestamp,
      updatedAt: timestamp,
    });
    for (let index = 0; index < source.chunks; index++) {
      // The policies' second chunk repeats the handbook's first: their fused scores tie exactly.
      const text =
        source.name === 'policies' && index === 1 && firstText !== undefined
          ? firstText
          : `${pick(TOPICS)}. ${pick(DETAILS)} ${random.chance(0.5) ? pick(TOPICS) + '.' : ''}`.trim();
      firstText ??= text;
      chunks.push({
        id: chunkId(documentId, index),
        kind: 'knowledge-chunk',
        library: source.library,
        documentId,
        title: `The ${source.name}`,
        index,
        text,
        headings: index % 3 === 0 ? [] : ['Policies', `Part ${index}`],
        ...(source.format === 'pdf' ? { pages: [1 + Math.floor(index / 2)] } : {}),
        tokens: Math.ceil(text.length / 4),
        embedding: hashedEmbedding(text, DIMENSIONS),
      });
    }
  });
  return { documents, chunks };
}

beforeAll(async () => {
  local = await startLocalCosmos({ searchFunctions: true });
  client = createLocalCosmosClient(local);
  await provisionCosmos(client, DATABASE, knowledgeContainers);
  const database = client.database(DATABASE);
  cosmosRanked = createKnowledgeStores(database, { ranking: 'cosmos' });
  inProcess = createKnowledgeStores(database, { ranking: 'in-process' });
  const { documents, chunks } = corpus();
  for (const document of documents) expect(await inProcess.documents.create(document)).toBe('created');
  await inProcess.chunks.put(chunks);

  plain = await startLocalCosmos();
  plainClient = createLocalCosmosClient(plain);
  await provisionCosmos(plainClient, DATABASE, knowledgeContainers);
});

afterAll(async () => {
  client?.dispose();
  plainClient?.dispose();
  await local?.stop();
  await plain?.stop();
});

const QUERIES: [string, number][] = [
  ['expense reports receipts', 5],
  ['How do I book travel to a client?', 10],
  ['laptop replacement IT service desk', 8],
  ['parental leave', 20],
  ['security passwords hardware key rotation', 44],
  ['when does the office open', 3],
  ['training', 1],
  ['remote work stipend desk chair and conferences', 15],
  // Stop words only: no full-text terms, both rank by vector alone.
  ['the and of it', 6],
];

const search = (stores: KnowledgeStores, text: string, limit: number, relevance: Relevance = EVERY_HIT) =>
  stores.chunks.search({
    libraries: searchableLibraries(USER),
    text,
    vector: hashedEmbedding(text, DIMENSIONS),
    limit,
    relevance,
  });

describe('knowledge search: Cosmos DB query and in-process ranking', () => {
  it.each(QUERIES)('agree on %j (limit %d)', async (text, limit) => {
    const [fromCosmos, fromProcess] = await Promise.all([
      search(cosmosRanked, text, limit),
      search(inProcess, text, limit),
    ]);
    expect(fromProcess).toHaveLength(Math.min(limit, SEARCHABLE));
    expect(fromCosmos.map((match) => match.chunk.id)).toEqual(fromProcess.map((match) => match.chunk.id));
    expect(fromCosmos.map((match) => match.chunk)).toEqual(fromProcess.map((match) => match.chunk));
    fromCosmos.forEach((match, i) =>
      expect(match.similarity).toBeCloseTo(fromProcess[i]?.similarity ?? NaN, 6),
    );
    // Only ready documents of the user's libraries, on both paths.
    for (const match of fromCosmos) {
      expect(searchableLibraries(USER)).toContain(match.chunk.library);
      expect(match.chunk.title).toMatch(/handbook|notes|policies|it-guide/);
    }
    // The Cosmos path's score is positional (Cosmos DB returns no fused score): best first, like the other.
    for (const matches of [fromCosmos, fromProcess])
      matches.slice(1).forEach((match, i) => expect(match.score).toBeLessThanOrEqual(matches[i]?.score ?? 0));
  });

  it.each(QUERIES)("agree on %j (limit %d) with the offline model's relevance rule", async (text, limit) => {
    const [fromCosmos, fromProcess] = await Promise.all([
      search(cosmosRanked, text, limit, OFFLINE_RELEVANCE),
      search(inProcess, text, limit, OFFLINE_RELEVANCE),
    ]);
    expect(fromCosmos.map((match) => match.chunk.id)).toEqual(fromProcess.map((match) => match.chunk.id));
    fromCosmos.forEach((match, i) =>
      expect(match.similarity).toBeCloseTo(fromProcess[i]?.similarity ?? NaN, 6),
    );
  });

  it('keeps nothing on either path for a query that matches no chunk', async () => {
    const text = 'quantum chromodynamics lattice';
    const [fromCosmos, fromProcess] = await Promise.all([
      search(cosmosRanked, text, 5, OFFLINE_RELEVANCE),
      search(inProcess, text, 5, OFFLINE_RELEVANCE),
    ]);
    expect(fromProcess).toEqual([]);
    expect(fromCosmos).toEqual([]);
    // Ranking alone would have returned five.
    expect(await search(inProcess, text, 5)).toHaveLength(5);
  });

  it('puts two chunks of the same text next to each other, in the same order on both paths', async () => {
    const { documents, chunks } = corpus();
    const searchable = new Set(
      documents
        .filter((document) => document.status === 'ready' && document.library !== privateLibrary(OTHER))
        .map((document) => document.documentId),
    );
    const text = chunks[0]?.text ?? '';
    const twins = chunks
      .filter((chunk) => chunk.text === text && searchable.has(chunk.documentId))
      .map((chunk) => chunk.id);
    expect(twins.length).toBeGreaterThanOrEqual(2);
    const fromCosmos = await search(cosmosRanked, text, twins.length);
    const fromProcess = await search(inProcess, text, twins.length);
    expect(fromProcess.map((match) => match.chunk.id)).toEqual([...twins].sort());
    expect(fromCosmos.map((match) => match.chunk.id)).toEqual([...twins].sort());
  });

  it('agree again once a document turns deleting', async () => {
    const stored = await inProcess.documents.get(SHARED_LIBRARY, corpus().documents[4]!.documentId);
    expect(stored?.document.title).toBe('The policies');
    const before = await search(inProcess, 'expense reports receipts', 40);
    expect(before.some((match) => match.chunk.title === 'The policies')).toBe(true);
    expect(
      await inProcess.documents.replace({ ...stored!.document, status: 'deleting' }, stored!.version),
    ).toBe('written');
    try {
      const [fromCosmos, fromProcess] = await Promise.all([
        search(cosmosRanked, 'expense reports receipts', 40),
        search(inProcess, 'expense reports receipts', 40),
      ]);
      expect(fromProcess).toHaveLength(SEARCHABLE - 16);
      expect(fromCosmos.map((match) => match.chunk.id)).toEqual(fromProcess.map((match) => match.chunk.id));
      expect(fromCosmos.some((match) => match.chunk.title === 'The policies')).toBe(false);
    } finally {
      const now = await inProcess.documents.get(SHARED_LIBRARY, stored!.document.documentId);
      await inProcess.documents.replace({ ...now!.document, status: 'ready' }, now!.version);
    }
  });

  it("agree when narrowed to named documents, and neither reads another user's", async () => {
    const named = new Map(corpus().documents.map((document) => [document.title, document.documentId]));
    const documentIds = ['The notes', 'The policies', 'The draft', 'The secret'].map(
      (title) => named.get(title) ?? '',
    );
    const narrowed = (stores: KnowledgeStores) =>
      stores.chunks.search({
        libraries: searchableLibraries(USER),
        documentIds,
        text: 'expense reports receipts',
        vector: hashedEmbedding('expense reports receipts', DIMENSIONS),
        limit: 40,
        relevance: EVERY_HIT,
      });
    const [fromCosmos, fromProcess] = await Promise.all([narrowed(cosmosRanked), narrowed(inProcess)]);
    // The ready ones of the caller's named documents: not the draft (processing), not another user's secret.
    expect(fromProcess).toHaveLength(6 + 16);
    expect(new Set(fromProcess.map((match) => match.chunk.title))).toEqual(
      new Set(['The notes', 'The policies']),
    );
    expect(fromCosmos.map((match) => match.chunk.id)).toEqual(fromProcess.map((match) => match.chunk.id));
  });

  it('sends Cosmos DB a query the local engine alone cannot answer: the Azure path really ran', async () => {
    const stores = createKnowledgeStores(plainClient.database(DATABASE), { ranking: 'cosmos' });
    await expect(search(stores, 'expense', 3)).rejects.toBeInstanceOf(DependencyError);
  });
});
