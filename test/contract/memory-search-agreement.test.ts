// Conversation search's two paths agree. The same ~40 summaries are searched by the summaries adapter in its
// two modes over the same local Cosmos DB with the real @azure/cosmos client: 'cosmos' sends the vector query
// Azure gets (TOP n ...
import type { CosmosClient } from '@azure/cosmos';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import {
  createLocalCosmosClient,
  provisionCosmos,
  startLocalCosmos,
  type LocalCosmos,
} from '../../local/cosmos/local-cosmos.js';
import { hashedEmbedding } from '../../local/offline-model/hashed-embedding.js';
import { COSMOS_DATABASE, cosmosContainers } from '../../shared/app/cosmos-containers.js';
import { DependencyError } from '../../shared/errors.js';
import { createMemoryStores, type MemoryStores } from '../../shared/memory/adapters/memory-adapters.js';
import type { ConversationSummaryDocument } from '../../shared/memory/contracts.js';
import { summaryDocument } from '../support/memory-fixtures.js';
import { EVERY_HIT, OFFLINE_RELEVANCE } from '../support/search-relevance.js';
import { SeededRandom } from '../support/seeded-random.js';

/** The local runtime's LLM_EMBEDDING_DIMENSIONS default. */
const DIMENSIONS = 1536;
const USER = 'agreement-user';

let local: LocalCosmos;
let plain: LocalCosmos;
let client: CosmosClient;
let plainClient: CosmosClient;
let cosmosRanked: MemoryStores;
let inProcess: MemoryStores;

const TOPICS = [
  'planning a trip to Lisbon and Porto with Ana',
  'training for a spring marathon and running shoes',
  'TypeScript build errors under strict mode',
  'baking sourdough bread with a new starter',
  'pruning roses and planting tomatoes in the garden',
  'preparing for a job interview at a bank',
  'learning piano scales and a Chopin nocturne',
  'filing a tax return and deductible expenses',
  'choosing a laptop for video editing',
  'a birthday party for a daughter turning seven',
];
const DETAILS = [
  'The user felt confident about it.',
  'Costs were discussed at length.',
  'A checklist was written for next week.',
  'Several options were compared and ranked.',
  'The assistant suggested books and videos.',
  'Travel dates and hotels came up briefly.',
  'The user asked for a short summary by email.',
  'Running late was a recurring worry.',
];

function corpus(): ConversationSummaryDocument[] {
  const random = new SeededRandom(10);
  const pick = <T>(items: readonly T[]) => items[random.int(0, items.length - 1)] as T;
  const documents: ConversationSummaryDocument[] = [];
  for (let i = 0; i < 40; i++) {
    const text =
      i === 39
        ? (documents[7]?.summary ?? '') // the same text as another: their fused scores tie exactly
        : `${pick(TOPICS)}; also ${pick(TOPICS)}. ${pick(DETAILS)} ${random.chance(0.5) ? pick(DETAILS) : ''}`.trim();
    const timestamp = new Date(Date.UTC(2025, 0, 1, 0, i)).toISOString();
    documents.push(
      summaryDocument(USER, `conv-${String(i).padStart(2, '0')}`, {
        summary: text,
        themes: [],
        persons: [],
        places: [],
        user_sentiment: 'neutral',
        timestamp,
        vector_embedding: hashedEmbedding(text, DIMENSIONS),
        coveredThrough: 1,
        exchanges: 1,
        createdAt: timestamp,
      }),
    );
  }
  return documents;
}

beforeAll(async () => {
  local = await startLocalCosmos({ searchFunctions: true });
  client = createLocalCosmosClient(local);
  await provisionCosmos(client, COSMOS_DATABASE, cosmosContainers);
  const database = client.database(COSMOS_DATABASE);
  cosmosRanked = createMemoryStores(database, { ranking: 'cosmos' });
  inProcess = createMemoryStores(database, { ranking: 'in-process' });
  for (const document of corpus()) await inProcess.summaries.put(document, undefined);
  // Another user's summaries in the same container: the partition key keeps them out of both rankings.
  await inProcess.summaries.put(
    { ...corpus()[0]!, userId: 'someone-else', summary: 'marathon marathon marathon' },
    undefined,
  );

  plain = await startLocalCosmos();
  plainClient = createLocalCosmosClient(plain);
  await provisionCosmos(plainClient, COSMOS_DATABASE, cosmosContainers);
});

afterAll(async () => {
  client?.dispose();
  plainClient?.dispose();
  await local?.stop();
  await plain?.stop();
});

const QUERIES: [string, number][] = [
  ['marathon training shoes', 5],
  ['Lisbon trip with Ana', 10],
  ['How do I fix TypeScript build errors?', 8],
  ['bread', 20],
  ['garden tomatoes roses checklist', 40],
  ['what did we say about the tax return and expenses', 3],
  ['piano', 1],
  ['a laptop for editing videos and travel hotels', 15],
  // Stop words only: no full-text terms, both rank by vector alone.
  ['the and of it', 6],
];

describe('hybrid search: Cosmos DB query and in-process ranking', () => {
  it.each(QUERIES)('agree on %j (limit %d)', async (text, limit) => {
    const query = { text, vector: hashedEmbedding(text, DIMENSIONS), limit, relevance: EVERY_HIT };
    const [fromCosmos, fromProcess] = await Promise.all([
      cosmosRanked.summaries.search(USER, query),
      inProcess.summaries.search(USER, query),
    ]);
    expect(fromProcess).toHaveLength(Math.min(limit, 40));
    expect(fromCosmos.map((match) => match.summary.sessionId)).toEqual(
      fromProcess.map((match) => match.summary.sessionId),
    );
    expect(fromCosmos.map((match) => match.summary)).toEqual(fromProcess.map((match) => match.summary));
    fromCosmos.forEach((match, i) =>
      expect(match.similarity).toBeCloseTo(fromProcess[i]?.similarity ?? NaN, 6),
    );
    // The Cosmos path's score is positional (Cosmos DB returns no fused score): best first, like the other.
    for (const matches of [fromCosmos, fromProcess])
      matches.slice(1).forEach((match, i) => expect(match.score).toBeLessThanOrEqual(matches[i]?.score ?? 0));
  });

  it.each(QUERIES)("agree on %j (limit %d) with the offline model's relevance rule", async (text, limit) => {
    const query = { text, vector: hashedEmbedding(text, DIMENSIONS), limit, relevance: OFFLINE_RELEVANCE };
    const [fromCosmos, fromProcess] = await Promise.all([
      cosmosRanked.summaries.search(USER, query),
      inProcess.summaries.search(USER, query),
    ]);
    expect(fromCosmos.map((match) => match.summary)).toEqual(fromProcess.map((match) => match.summary));
  });

  it('finds a conversation by a place named only in its places, on both paths, and nothing for no match', async () => {
    const timestamp = '2025-02-01T00:00:00.000Z';
    await inProcess.summaries.put(
      summaryDocument(USER, 'conv-places', {
        summary: 'Compared hotel prices for a long weekend away.',
        themes: ['holidays'],
        persons: ['Ana'],
        places: ['Coimbra'],
        user_sentiment: 'positive',
        timestamp,
        vector_embedding: hashedEmbedding('Compared hotel prices for a long weekend away.', DIMENSIONS),
        coveredThrough: 1,
        exchanges: 1,
        createdAt: timestamp,
      }),
      undefined,
    );
    try {
      for (const [text, expected] of [
        ['Coimbra', ['conv-places']],
        ['quantum chromodynamics lattice', []],
      ] as const) {
        const query = {
          text,
          vector: hashedEmbedding(text, DIMENSIONS),
          limit: 5,
          relevance: OFFLINE_RELEVANCE,
        };
        const [fromCosmos, fromProcess] = await Promise.all([
          cosmosRanked.summaries.search(USER, query),
          inProcess.summaries.search(USER, query),
        ]);
        expect(fromProcess.map((match) => match.summary.sessionId)).toEqual(expected);
        expect(fromCosmos.map((match) => match.summary.sessionId)).toEqual(expected);
      }
    } finally {
      await inProcess.summaries.delete(USER, 'conv-places');
    }
  });

  it('puts two summaries of the same text next to each other, in the same order on both paths', async () => {
    const text = corpus()[7]?.summary ?? '';
    const query = { text, vector: hashedEmbedding(text, DIMENSIONS), limit: 2, relevance: EVERY_HIT };
    const fromCosmos = await cosmosRanked.summaries.search(USER, query);
    const fromProcess = await inProcess.summaries.search(USER, query);
    expect(fromProcess.map((match) => match.summary.sessionId)).toEqual(['conv-07', 'conv-39']);
    expect(fromCosmos.map((match) => match.summary.sessionId)).toEqual(['conv-07', 'conv-39']);
  });

  it('keeps to the scopes asked for on both paths, a summary without a scope being the user’s', async () => {
    const scoped = 'scoped-user';
    const scopes = [
      undefined,
      'project:proj-0123456789abcdef0123456789abcdef',
      'assistant:asst-0123456789abcdef0123456789abcdef',
    ] as const;
    for (const [i, document] of corpus().slice(0, 9).entries()) {
      const scope = scopes[i % 3];
      await inProcess.summaries.put(
        { ...document, userId: scoped, ...(scope === undefined ? {} : { scope }) },
        undefined,
      );
    }
    for (const asked of [['user'], [scopes[1]], ['user', scopes[2]]] as const) {
      const text = 'marathon Lisbon bread garden piano';
      const query = {
        text,
        vector: hashedEmbedding(text, DIMENSIONS),
        limit: 9,
        relevance: EVERY_HIT,
        scopes: [...asked],
      };
      const [fromCosmos, fromProcess] = await Promise.all([
        cosmosRanked.summaries.search(scoped, query),
        inProcess.summaries.search(scoped, query),
      ]);
      expect(fromProcess).toHaveLength(3 * asked.length);
      expect(
        fromProcess.every((match) => (asked as readonly string[]).includes(match.summary.scope ?? 'user')),
      ).toBe(true);
      expect(fromCosmos.map((match) => match.summary)).toEqual(fromProcess.map((match) => match.summary));
    }
    const page = await inProcess.summaries.list(scoped, { limit: 20, scope: scopes[1] });
    expect(page.summaries.map((summary) => summary.scope)).toEqual([scopes[1], scopes[1], scopes[1]]);
    await inProcess.summaries.deleteAll(scoped);
  });

  it('sends Cosmos DB a query the local engine alone cannot answer: the Azure path really ran', async () => {
    const stores = createMemoryStores(plainClient.database(COSMOS_DATABASE), { ranking: 'cosmos' });
    await expect(
      stores.summaries.search(USER, {
        text: 'marathon',
        vector: hashedEmbedding('marathon', DIMENSIONS),
        limit: 3,
        relevance: EVERY_HIT,
      }),
    ).rejects.toBeInstanceOf(DependencyError);
  });
});
