// Conversation search on the local runtime's stores: one user with 100, 1,000 and 10,000 summaries
// (embeddings of the local runtime's default length) in the local Cosmos DB, searched through the real
// @azure/cosmos client by the summaries adapter in the local runtime's mode (ranked in process).
import { mkdir, writeFile } from 'node:fs/promises';
import { performance } from 'node:perf_hooks';

import { createLocalCosmosClient, provisionCosmos, startLocalCosmos } from '../local/cosmos/local-cosmos.js';
import { hashedEmbedding } from '../local/offline-model/hashed-embedding.js';
import { mapBounded } from '../shared/bounded-parallel.js';
import { COSMOS_DATABASE, cosmosContainers } from '../shared/app/cosmos-containers.js';
import { createMemoryStores } from '../shared/memory/adapters/memory-adapters.js';
import type { ConversationSummaryDocument } from '../shared/memory/contracts.js';
import { DEFAULT_SEARCH_LIMIT } from '../shared/memory/contracts.js';
import { percentile, round } from './figures.js';

const SIZES = (process.env.SIZES ?? '100,1000,10000').split(',').map(Number);
const SEARCHES = Number(process.env.SEARCHES ?? 50);
/** The local runtime's LLM_EMBEDDING_DIMENSIONS default (shared/llm/settings.ts), text-embedding-3-small's length. */
const DIMENSIONS = 1536;
const LOAD_CONCURRENCY = 16;
const RESULTS_FILE = 'bench/results/memory-search.json';

const WORDS = (
  'trip lisbon porto marathon training shoes typescript build strict sourdough bread starter garden roses ' +
  'tomatoes interview bank piano chopin nocturne tax return expenses laptop video editing birthday party ' +
  'daughter budget holiday flights hotel museum recipe pasta dinner friends meeting project deadline report ' +
  'invoice client design review weekend hiking mountains weather camera photos music guitar lessons'
).split(' ');
const QUERIES = [
  'planning a trip to Lisbon',
  'marathon training plan',
  'TypeScript strict build errors',
  'sourdough starter',
  'job interview at a bank',
  'what did we say about the tax return',
  'laptop for video editing',
  'birthday party ideas',
  'hiking in the mountains with friends',
  'client project deadline and invoice',
];

/** A deterministic summary of 30 to 60 words from the vocabulary. */
function summaryText(i: number): string {
  let state = (i + 1) * 2654435761;
  const next = () => {
    state = (state * 1103515245 + 12345) >>> 0;
    return state;
  };
  const length = 30 + (next() % 31);
  return Array.from({ length }, () => WORDS[next() % WORDS.length]).join(' ');
}

function summaryOf(userId: string, i: number): ConversationSummaryDocument {
  const text = summaryText(i);
  const timestamp = new Date(Date.UTC(2025, 0, 1) + i * 60_000).toISOString();
  return {
    id: `s-${i}`,
    kind: 'conversation-summary',
    userId,
    sessionId: `s-${i}`,
    summary: text,
    themes: ['theme one', 'theme two'],
    persons: ['Ana'],
    places: ['Lisbon'],
    user_sentiment: 'neutral',
    timestamp,
    vector_embedding: hashedEmbedding(text, DIMENSIONS),
    coveredThrough: 7,
    exchanges: 4,
    createdAt: timestamp,
  };
}

interface SearchFigures {
  p50Ms: number;
  p95Ms: number;
  requestsPerSearch: number;
  kBytesPerSearch: number;
}

interface SizeResult {
  summaries: number;
  loadSeconds: number;
  cold: { ms: number; requests: number; kBytes: number };
  warm: SearchFigures & { searches: number };
  /** Each search right after one summary was rewritten: the candidate query plus one summary read. */
  afterOneWrite: SearchFigures & { searches: number };
  heapMBAfter: number;
}

async function main(): Promise<void> {
  const local = await startLocalCosmos();
  const client = createLocalCosmosClient(local);
  const results: SizeResult[] = [];
  try {
    await provisionCosmos(client, COSMOS_DATABASE, cosmosContainers);
    const database = client.database(COSMOS_DATABASE);
    for (const size of SIZES) {
      const userId = `bench-user-${size}`;
      const loader = createMemoryStores(database, { ranking: 'in-process' });
      const loadStarted = performance.now();
      await mapBounded(
        Array.from({ length: size }, (_, i) => i),
        LOAD_CONCURRENCY,
        async (i) => {
          if ((await loader.summaries.put(summaryOf(userId, i), undefined)) !== 'written')
            throw new Error(`summary ${i} was not written`);
        },
      );
      const loadSeconds = round((performance.now() - loadStarted) / 1000, 1);

      // A fresh adapter: what a new process (or a cold Functions instance) has.
      const stores = createMemoryStores(database, { ranking: 'in-process' });
      const search = async (text: string) => {
        const started = performance.now();
        const matches = await stores.summaries.search(userId, {
          text,
          vector: hashedEmbedding(text, DIMENSIONS),
          limit: DEFAULT_SEARCH_LIMIT,
          // Every hit kept: this bench measures the cost of ranking a large history, whatever the query.
          relevance: { minSimilarity: -1, textMatchAdmits: true },
        });
        if (matches.length === 0) throw new Error('a search found nothing');
        return performance.now() - started;
      };
      const measured = async (runs: number, before?: (run: number) => Promise<void>) => {
        const times: number[] = [];
        let requests = 0;
        let bytes = 0;
        for (let run = 0; run < runs; run++) {
          await before?.(run);
          local.resetStats();
          times.push(await search(QUERIES[run % QUERIES.length] ?? 'trip'));
          const stats = local.stats();
          requests += stats.requests;
          bytes += stats.requestBytes + stats.responseBytes;
        }
        return { times, requests: requests / runs, bytes: bytes / runs };
      };

      const cold = await measured(1);
      const warm = await measured(SEARCHES);
      const afterOneWrite = await measured(Math.min(SEARCHES, 20), async (run) => {
        const current = await loader.summaries.get(userId, `s-${run}`);
        const changed = { ...summaryOf(userId, run), summary: `${summaryText(run)} rewritten ${run}` };
        if ((await loader.summaries.put(changed, current?.version)) !== 'written')
          throw new Error('rewrite failed');
      });
      const figures = (m: { times: number[]; requests: number; bytes: number }) => ({
        p50Ms: round(percentile(m.times, 50), 1),
        p95Ms: round(percentile(m.times, 95), 1),
        requestsPerSearch: round(m.requests, 1),
        kBytesPerSearch: round(m.bytes / 1024, 1),
      });
      const result: SizeResult = {
        summaries: size,
        loadSeconds,
        cold: {
          ms: round(cold.times[0] ?? NaN, 1),
          requests: cold.requests,
          kBytes: round(cold.bytes / 1024, 1),
        },
        warm: { searches: SEARCHES, ...figures(warm) },
        afterOneWrite: { searches: afterOneWrite.times.length, ...figures(afterOneWrite) },
        heapMBAfter: round(process.memoryUsage().heapUsed / 2 ** 20, 0),
      };
      results.push(result);
      console.log(
        `${String(size).padStart(6)} summaries (loaded in ${loadSeconds} s): cold ${result.cold.ms} ms ` +
          `(${result.cold.requests} requests, ${result.cold.kBytes} kB); warm p50 ${result.warm.p50Ms} ms, ` +
          `p95 ${result.warm.p95Ms} ms (${result.warm.requestsPerSearch} requests, ${result.warm.kBytesPerSearch} kB ` +
          `per search); after one write p50 ${result.afterOneWrite.p50Ms} ms, p95 ${result.afterOneWrite.p95Ms} ms ` +
          `(${result.afterOneWrite.requestsPerSearch} requests); heap ${result.heapMBAfter} MB`,
      );
    }
  } finally {
    client.dispose();
    await local.stop();
  }
  await mkdir('bench/results', { recursive: true });
  await writeFile(
    RESULTS_FILE,
    `${JSON.stringify(
      {
        at: new Date().toISOString(),
        node: process.version,
        dimensions: DIMENSIONS,
        limit: DEFAULT_SEARCH_LIMIT,
        ranking: 'in-process',
        results,
      },
      null,
      2,
    )}\n`,
  );
  console.log(`\nWritten to ${RESULTS_FILE}`);
}

await main();
