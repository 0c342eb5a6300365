// The knowledge base on the local runtime (as `npm start` runs it, the offline model's embeddings): ingestion
// throughput, search latency at 1,000 and 10,000 chunks, relevance on a labelled set, and a hostile corpus
// (each document's outcome, peak RSS, event-loop delay and /api/health p99 while it is read).
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';

import { createLogHandler } from '../local/log.js';
import { startLocalRuntime } from '../local/runtime.js';
import type { DocumentView, KnowledgeSearchHit } from '../shared/knowledge/contracts.js';
import { privateLibrary } from '../shared/knowledge/contracts.js';
import {
  LABELLED_DOCUMENTS,
  scoreLabelledSet,
  type LabelledFigures,
} from '../test/support/labelled-queries.js';
import { makePdf } from '../test/support/make-pdf.js';
import { percentile, round } from './figures.js';
import {
  FILLER,
  hostileCorpus,
  markdownDocument,
  pdfDocument,
  SECTIONS_PER_DOCUMENT,
  TOPICS,
} from './knowledge-corpus.js';

const SEARCHES = Number(process.env.SEARCHES ?? 100);
const PDFS = Number(process.env.PDFS ?? 8);
const SIZES = (process.env.SIZES ?? '1000,10000').split(',').map(Number);
const UPLOADS_IN_FLIGHT = 4;
const RESULTS_FILE = 'bench/results/knowledge.json';
const USER = 'bench-knowledge-user';
const IDENTITY = { 'x-ms-client-principal-id': USER };
const HOSTILE = process.env.HOSTILE ?? 'run';
const READ_TIMEOUT_MS = process.env.READ_TIMEOUT_MS ?? '120000';
/** Whose bombs the hostile corpus uploads; USER's ordinary PDF is timed while the last one runs. */
const HOSTILE_USER = 'bench-knowledge-hostile';

const dataDir = await mkdtemp(join(tmpdir(), 'bench-knowledge-'));
const runtime = await startLocalRuntime({
  port: 0,
  dataDir,
  settings: {
    AUTH_MODE: 'app-service',
    OFFLINE_MODEL_TTFT_MS: '0',
    OFFLINE_MODEL_TOKENS_PER_SECOND: '0',
    KNOWLEDGE_READ_TIMEOUT_MS: READ_TIMEOUT_MS,
  },
  logHandler: createLogHandler('error'),
});
const api = `${runtime.url}/api/knowledge`;

async function upload(body: object, identity: Record<string, string> = IDENTITY): Promise<DocumentView> {
  const response = await fetch(`${api}/documents`, {
    method: 'POST',
    headers: { ...identity, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  if (response.status !== 202)
    throw new Error(`upload answered ${response.status}: ${await response.text()}`);
  return ((await response.json()) as { document: DocumentView }).document;
}

/** Uploads with a few in flight, as a client with many files would, and waits until every one is ready. */
async function ingest(bodies: readonly object[]): Promise<{ ms: number; documents: DocumentView[] }> {
  const started = performance.now();
  const ids: string[] = [];
  for (let i = 0; i < bodies.length; i += UPLOADS_IN_FLIGHT)
    ids.push(
      ...(await Promise.all(bodies.slice(i, i + UPLOADS_IN_FLIGHT).map((body) => upload(body)))).map(
        (d) => d.documentId,
      ),
    );
  const documents: DocumentView[] = [];
  for (const id of ids) {
    for (;;) {
      const response = await fetch(`${api}/documents/${id}`, { headers: IDENTITY });
      const { document } = (await response.json()) as { document: DocumentView };
      if (document.status === 'failed') throw new Error(`document ${id} failed: ${document.failure?.reason}`);
      if (document.status === 'ready') {
        documents.push(document);
        break;
      }
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }
  return { ms: performance.now() - started, documents };
}

/** Embeddings requests the worker made for these documents (kept on each record). */
async function embeddingRequests(documents: readonly DocumentView[]): Promise<number> {
  let total = 0;
  for (const document of documents) {
    const stored = await runtime.app.knowledge.documents.get(privateLibrary(USER), document.documentId);
    total += stored?.document.embeddingRequests ?? 0;
  }
  return total;
}

async function search(query: string): Promise<KnowledgeSearchHit[]> {
  const response = await fetch(`${api}/search`, {
    method: 'POST',
    headers: { ...IDENTITY, 'content-type': 'application/json' },
    body: JSON.stringify({ query, limit: 5 }),
  });
  if (response.status !== 200)
    throw new Error(`search answered ${response.status}: ${await response.text()}`);
  return ((await response.json()) as { results: KnowledgeSearchHit[] }).results;
}

async function searchFigures(chunks: number) {
  const queries = Array.from(
    { length: SEARCHES },
    (_, i) => `how does ${TOPICS[i % TOPICS.length]} work for ${FILLER[(i * 5) % FILLER.length]}`,
  );
  runtime.cosmos.resetStats();
  let started = performance.now();
  const firstHits = await search(queries[0] as string);
  const coldMs = performance.now() - started;
  const cold = runtime.cosmos.stats();
  const times: number[] = [];
  let onTopic = 0;
  runtime.cosmos.resetStats();
  for (const query of queries) {
    started = performance.now();
    const hits = await search(query);
    times.push(performance.now() - started);
    const topic = TOPICS.find((t) => query.includes(t)) as string;
    if (hits[0]?.text.includes(topic)) onTopic++;
  }
  const warm = runtime.cosmos.stats();
  return {
    chunks,
    firstSearchMs: round(coldMs),
    firstSearchCosmosRequests: cold.requests,
    firstSearchCosmosResponseBytes: cold.responseBytes,
    firstSearchResults: firstHits.length,
    searches: SEARCHES,
    p50Ms: round(percentile(times, 50)),
    p95Ms: round(percentile(times, 95)),
    cosmosRequestsPerSearch: round(warm.requests / SEARCHES, 2),
    cosmosResponseBytesPerSearch: Math.round(warm.responseBytes / SEARCHES),
    topResultOnTopic: round(onTopic / SEARCHES, 2),
  };
}

// --- Relevance: the labelled set (test/support/labelled-queries.ts) through the API ------------------------------

/** Its own user, so the bench's other documents never answer the labelled queries. */
const LABELLED_USER = 'bench-labelled-user';

/**
 * Recall@3 of the labelled queries and the share of queries nothing answers that come back empty, through upload,
 * the worker and POST /api/knowledge/search, as `npm start` runs them (the offline model's embeddings).
 */
async function relevanceFigures(): Promise<LabelledFigures & { documents: number }> {
  const headers = { 'x-ms-client-principal-id': LABELLED_USER, 'content-type': 'application/json' };
  const ids: string[] = [];
  for (const source of LABELLED_DOCUMENTS) {
    const response = await fetch(`${api}/documents`, {
      method: 'POST',
      headers,
      body: JSON.stringify({
        fileName: source.fileName,
        contentType: source.format === 'pdf' ? 'application/pdf' : 'text/markdown',
        contentBase64: Buffer.from(source.content).toString('base64'),
      }),
    });
    if (response.status !== 202)
      throw new Error(`upload answered ${response.status}: ${await response.text()}`);
    ids.push(((await response.json()) as { document: DocumentView }).document.documentId);
  }
  for (const id of ids)
    for (;;) {
      const read = await fetch(`${api}/documents/${id}`, { headers });
      const { document } = (await read.json()) as { document: DocumentView };
      if (document.status === 'ready') break;
      if (document.status === 'failed') throw new Error(`labelled document ${id} failed`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  const figures = await scoreLabelledSet(async (query) => {
    const response = await fetch(`${api}/search`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ query, limit: 5 }),
    });
    if (response.status !== 200)
      throw new Error(`search answered ${response.status}: ${await response.text()}`);
    return ((await response.json()) as { results: KnowledgeSearchHit[] }).results.map((hit) => hit.text);
  });
  return { documents: ids.length, ...figures };
}

/** Polls a document until it is ready or failed. */
async function settledDocument(documentId: string, identity: Record<string, string>): Promise<DocumentView> {
  for (;;) {
    const response = await fetch(`${api}/documents/${documentId}`, { headers: identity });
    const { document } = (await response.json()) as { document: DocumentView };
    if (document.status === 'ready' || document.status === 'failed') return document;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/**
 * Each hostile document alone: its ingestion time and outcome, the peak RSS of the process (workers included), and
 * the serving thread's event-loop delay p99 and /api/health latency p99 while it is read. While the last (the
 * nested forms) runs, another user's ordinary PDF is uploaded and timed.
 */
async function hostileFigures() {
  const corpus = await hostileCorpus();
  const hostile = { 'x-ms-client-principal-id': HOSTILE_USER };
  // Warm the reading workers (their start is no document's cost).
  const warm = await upload(
    { fileName: 'warm.txt', contentType: 'text/plain', contentBase64: 'V2FybS4=' },
    hostile,
  );
  await settledDocument(warm.documentId, hostile);
  const results = [];
  for (const [index, item] of corpus.entries()) {
    const last = index === corpus.length - 1;
    const loop = monitorEventLoopDelay({ resolution: 10 });
    const health: number[] = [];
    let peakRss = process.memoryUsage.rss();
    let running = true;
    const sampler = setInterval(() => {
      peakRss = Math.max(peakRss, process.memoryUsage.rss());
    }, 20);
    const probing = (async () => {
      while (running) {
        const started = performance.now();
        await (await fetch(`${runtime.url}/api/health`)).arrayBuffer();
        health.push(performance.now() - started);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    })();
    loop.enable();
    const started = performance.now();
    const document = await upload(
      {
        fileName: item.fileName,
        contentType: item.type,
        contentBase64: Buffer.from(item.content).toString('base64'),
      },
      hostile,
    );
    let ordinary: { ms: number; status: string } | undefined;
    if (last) {
      await new Promise((resolve) => setTimeout(resolve, 500));
      const ordinaryStarted = performance.now();
      const ordinaryDocument = await upload({
        fileName: 'ordinary.pdf',
        contentType: 'application/pdf',
        contentBase64: Buffer.from(makePdf([['An ordinary page of the handbook.']])).toString('base64'),
      });
      const done = await settledDocument(ordinaryDocument.documentId, IDENTITY);
      ordinary = { ms: round(performance.now() - ordinaryStarted), status: done.status };
    }
    const settled = await settledDocument(document.documentId, hostile);
    const ms = performance.now() - started;
    loop.disable();
    running = false;
    await probing;
    clearInterval(sampler);
    const figures = {
      document: item.name,
      bytes: item.content.length,
      status: settled.status,
      reason: settled.failure?.reason,
      ingestionMs: round(ms),
      peakRssMb: round(peakRss / (1024 * 1024)),
      eventLoopDelayP99Ms: round(loop.percentile(99) / 1e6),
      healthRequests: health.length,
      healthP99Ms: round(percentile(health, 99)),
      ...(ordinary === undefined ? {} : { otherUsersOrdinaryPdf: ordinary }),
    };
    console.log('hostile', figures);
    results.push(figures);
  }
  return { readTimeoutMs: Number(READ_TIMEOUT_MS), documents: results };
}

const report: Record<string, unknown> = { machine: { cpus: (await import('node:os')).cpus().length } };
try {
  if (HOSTILE === 'only') {
    report.hostile = await hostileFigures();
    await mkdir('bench/results', { recursive: true });
    await writeFile(RESULTS_FILE, `${JSON.stringify(report, null, 2)}\n`);
    console.log(`wrote ${RESULTS_FILE}`);
  } else {
    // 0. Relevance on the labelled set, before the bulk documents (its own user: they never mix).
    report.relevance = await relevanceFigures();
    console.log('relevance', report.relevance);

    // 1. PDFs: pages per second through upload, queue, extraction, chunking, embedding and storage.
    const pdfBodies = Array.from({ length: PDFS }, (_, i) => ({
      fileName: `manual-${i}.pdf`,
      contentType: 'application/pdf',
      contentBase64: Buffer.from(pdfDocument(i)).toString('base64'),
    }));
    const pdf = await ingest(pdfBodies);
    const pdfChunks = pdf.documents.reduce((sum, d) => sum + (d.chunkCount ?? 0), 0);
    const pdfPages = pdf.documents.reduce((sum, d) => sum + (d.pageCount ?? 0), 0);
    const pdfEmbeddings = await embeddingRequests(pdf.documents);
    report.pdfIngestion = {
      documents: PDFS,
      pages: pdfPages,
      chunks: pdfChunks,
      seconds: round(pdf.ms / 1000, 2),
      pagesPerSecond: round(pdfPages / (pdf.ms / 1000)),
      chunksPerSecond: round(pdfChunks / (pdf.ms / 1000)),
      embeddingRequests: pdfEmbeddings,
      embeddingsPerRequest: round(pdfChunks / pdfEmbeddings, 1),
    };
    console.log('PDF ingestion', report.pdfIngestion);

    // 2. Markdown up to each size, then the searches at that size.
    let total = pdfChunks;
    let documentIndex = 0;
    const markdown = { documents: 0, chunks: 0, ms: 0, embeddingRequests: 0 };
    const searches = [];
    for (const size of SIZES) {
      const bodies: object[] = [];
      // Each document makes SECTIONS_PER_DOCUMENT chunks (the report gives the exact count searched).
      const needed = Math.max(0, Math.ceil((size - total) / SECTIONS_PER_DOCUMENT));
      for (let i = 0; i < needed; i++, documentIndex++)
        bodies.push({
          fileName: `policy-${documentIndex}.md`,
          contentType: 'text/markdown',
          contentBase64: Buffer.from(markdownDocument(documentIndex)).toString('base64'),
        });
      const done = await ingest(bodies);
      const chunks = done.documents.reduce((sum, d) => sum + (d.chunkCount ?? 0), 0);
      total += chunks;
      markdown.documents += bodies.length;
      markdown.chunks += chunks;
      markdown.ms += done.ms;
      markdown.embeddingRequests += await embeddingRequests(done.documents);
      const figures = await searchFigures(total);
      console.log('search', figures);
      searches.push(figures);
    }
    report.markdownIngestion = {
      documents: markdown.documents,
      chunks: markdown.chunks,
      seconds: round(markdown.ms / 1000, 2),
      chunksPerSecond: round(markdown.chunks / (markdown.ms / 1000)),
      embeddingRequests: markdown.embeddingRequests,
      embeddingsPerRequest: round(markdown.chunks / markdown.embeddingRequests, 1),
    };
    console.log('Markdown ingestion', report.markdownIngestion);
    report.search = searches;
    // 3. The hostile corpus, after the rest: its workers' memory is not in the figures above.
    if (HOSTILE !== 'skip') report.hostile = await hostileFigures();
    await mkdir('bench/results', { recursive: true });
    await writeFile(RESULTS_FILE, `${JSON.stringify(report, null, 2)}\n`);
    console.log(`wrote ${RESULTS_FILE}`);
  }
} finally {
  await runtime.stop();
  await rm(dataDir, { recursive: true, force: true });
}
