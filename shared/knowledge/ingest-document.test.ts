// The ingestion worker's use-case over in-memory stores: a document becomes ready, a redelivery changes
// nothing, an unreadable one fails with its reason, and a failing embeddings endpoint is retried, then fails
// it.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { LlmError } from '../llm/llm-gateway.js';
import { MAX_DELIVERY_COUNT } from '../messaging/service-bus-entities.js';
import { RecordingPublisher } from '../../test/support/in-memory-ports.js';
import {
  KeywordEmbeddings,
  knowledgeChunk,
  memoryKnowledgeStores,
} from '../../test/support/in-memory-knowledge.js';
import { makePdf } from '../../test/support/make-pdf.js';
import {
  chunkId,
  privateLibrary,
  type DocumentUpload,
  type IngestDocumentMessage,
  type KnowledgeDocument,
} from './contracts.js';
import { deleteDocument } from './delete-document.js';
import { createDocumentReader } from './extract-pool.js';
import { EMBEDDING_DELIVERIES, ingestDocument, type IngestServices } from './ingest-document.js';
import type { KnowledgeChunks } from './knowledge-chunks.js';
import type { KnowledgeDocuments } from './knowledge-documents.js';
import { searchKnowledge } from './search-knowledge.js';
import { readingBudget } from './settings.js';
import { uploadDocument } from './upload-document.js';
import { EVERY_HIT } from '../../test/support/search-relevance.js';

const LIBRARY = privateLibrary('user_001');
const HANDBOOK = [
  '# Employee Handbook',
  '',
  '## Parental leave',
  '',
  'Parental leave lasts sixteen weeks and is paid in full.',
  '',
  '## Expenses',
  '',
  'Expenses are filed with receipts within thirty days.',
  '',
  '## Travel',
  '',
  'Trains are booked for trips under four hours.',
  '',
].join('\n');

const silent = { log: () => undefined, warn: () => undefined };
const reader = createDocumentReader(readingBudget());
afterAll(() => reader.close());
// A worker's start (under tsx the sources compiled, then pdf.js loaded) is no test's: it is done once, first.
beforeAll(() => reader.read({ format: 'pdf', content: makePdf([['Warm.']]), owner: 'warm-up' }), 120_000);
let stores: ReturnType<typeof memoryKnowledgeStores>;
let model: KeywordEmbeddings;
let services: IngestServices;
let warnings: string[];

beforeEach(() => {
  stores = memoryKnowledgeStores({ partBytes: 64 });
  model = new KeywordEmbeddings(['parental', 'leave', 'expenses', 'trains']);
  warnings = [];
  services = {
    ...stores,
    reader,
    llm: model,
    settings: { chunkTokens: 50, chunkOverlapTokens: 0, maxChunks: 100, embeddingBatch: 2 },
    now: () => new Date('2026-03-02T10:00:00.000Z'),
  };
});

const log = { log: () => undefined, warn: (text: string) => void warnings.push(text) };

async function queued(upload: DocumentUpload): Promise<IngestDocumentMessage> {
  const { document } = await uploadDocument(
    {
      ...stores,
      publisher: new RecordingPublisher(),
      settings: { maxDocumentBytes: 1_000_000, sharedLibrary: { users: [], groups: [] } },
    },
    { userId: 'user_001' },
    upload,
  );
  return { library: LIBRARY, documentId: document.documentId, attempt: 1 };
}

/** The in-memory documents with some methods replaced (a race, a failure). */
function documentsWith(overrides: Partial<KnowledgeDocuments>): KnowledgeDocuments {
  const real = stores.documents;
  return {
    get: (library, documentId) => real.get(library, documentId),
    create: (document) => real.create(document),
    replace: (document, version) => real.replace(document, version),
    list: (library, options) => real.list(library, options),
    delete: (library, documentId) => real.delete(library, documentId),
    ...overrides,
  };
}

/** The in-memory chunks with some methods replaced. */
function chunksWith(overrides: Partial<KnowledgeChunks>): KnowledgeChunks {
  const real = stores.chunks;
  return {
    put: (chunks) => real.put(chunks),
    remove: (library, documentId, fromIndex) => real.remove(library, documentId, fromIndex),
    search: (query) => real.search(query),
    ...overrides,
  };
}

/** Changes the stored record as another request would (the owner, a delete, another run). */
async function setRecord(message: IngestDocumentMessage, fields: Partial<KnowledgeDocument>): Promise<void> {
  const stored = await stores.documents.get(message.library, message.documentId);
  expect(await stores.documents.replace({ ...stored!.document, ...fields }, stored!.version)).toBe('written');
}

/** A chunk of the document as an earlier run could have left it. */
const leftChunk = (message: IngestDocumentMessage, index: number) =>
  knowledgeChunk(
    { library: message.library, documentId: message.documentId, title: 'Employee Handbook' },
    index,
    'Parental leave lasts sixteen weeks.',
    model.vector('parental leave'),
  );

const nonRetryable = () => new LlmError('The input is too long.', { retryable: false, providerStatus: 400 });

const markdown = (text = HANDBOOK, extra: Partial<DocumentUpload> = {}) =>
  queued({ contentType: 'text/markdown', content: new TextEncoder().encode(text), ...extra });
const record = (message: IngestDocumentMessage): KnowledgeDocument | undefined =>
  stores.documents.document(message.library, message.documentId);

describe('ingestDocument: a document that can be indexed', () => {
  it('stores its chunks with their embeddings, marks it ready with its counts and removes its bytes', async () => {
    const message = await markdown();
    const outcome = await ingestDocument(services, message, silent);
    const chunks = stores.chunks.of(LIBRARY, message.documentId);
    expect(chunks.length).toBeGreaterThanOrEqual(3);
    expect(outcome).toEqual({
      status: 'ready',
      chunkCount: chunks.length,
      embeddingRequests: Math.ceil(chunks.length / 2),
    });
    expect(model.requests.map((texts) => texts.length)).toEqual(
      Array.from({ length: Math.ceil(chunks.length / 2) }, (_, i) => Math.min(2, chunks.length - 2 * i)),
    );
    expect(chunks.map((chunk) => chunk.id)).toEqual(chunks.map((_, i) => chunkId(message.documentId, i)));
    const leave = chunks.find((chunk) => chunk.text.includes('sixteen weeks'));
    expect(leave).toMatchObject({
      kind: 'knowledge-chunk',
      library: LIBRARY,
      title: 'Employee Handbook',
      headings: ['Employee Handbook', 'Parental leave'],
    });
    // Embedded with its title and headings, so a chunk is found by what it sits under too.
    expect(model.requests.flat().find((text) => text.includes('sixteen weeks'))).toMatch(
      /^Employee Handbook\n.*Parental leave/,
    );
    expect(leave?.embedding).toEqual(model.vector(model.requests.flat().find((t) => t.includes('sixteen'))!));
    expect(record(message)).toMatchObject({
      status: 'ready',
      title: 'Employee Handbook',
      pageCount: 1,
      chunkCount: chunks.length,
      embeddingRequests: Math.ceil(chunks.length / 2),
      characters: expect.any(Number),
    });
    expect(stores.uploads.parts.size).toBe(0);
    const hits = await searchKnowledge(
      { chunks: stores.chunks, llm: model, relevance: EVERY_HIT },
      'user_001',
      'parental leave',
      1,
    );
    expect(hits[0]?.text).toMatch(/sixteen weeks/);
  });

  it('keeps the title the uploader gave, and names an untitled document after its first line', async () => {
    const titled = await markdown(HANDBOOK, { title: 'HR Handbook' });
    await ingestDocument(services, titled, silent);
    expect(record(titled)?.title).toBe('HR Handbook');
    expect(stores.chunks.of(LIBRARY, titled.documentId)[0]?.title).toBe('HR Handbook');
    const notes = await queued({
      contentType: 'text/plain',
      content: new TextEncoder().encode('Team offsite notes\n\nWe meet in Porto.\n\nTrains leave at nine.'),
    });
    await ingestDocument(services, notes, silent);
    expect(record(notes)).toMatchObject({ title: 'Team offsite notes', titleGiven: false });
  });

  it('indexes a PDF with its pages', async () => {
    const pdf = makePdf([['Parental leave lasts sixteen weeks.'], ['Expenses need receipts.']], {
      title: 'Benefits',
    });
    const message = await queued({ contentType: 'application/pdf', content: pdf });
    // A small target, so each page's line is a chunk of its own.
    await ingestDocument(
      { ...services, settings: { ...services.settings, chunkTokens: 10 } },
      message,
      silent,
    );
    expect(record(message)).toMatchObject({ status: 'ready', pageCount: 2, title: 'Benefits' });
    const hits = await searchKnowledge(
      { chunks: stores.chunks, llm: model, relevance: EVERY_HIT },
      'user_001',
      'expenses',
      1,
    );
    expect(hits[0]).toMatchObject({ pages: [2], citation: 'Benefits, p. 2' });
  });

  it('changes nothing on a redelivery, for another attempt, or for a record that is gone', async () => {
    const message = await markdown();
    await ingestDocument(services, message, silent);
    const requests = model.requests.length;
    expect(await ingestDocument(services, message, silent)).toEqual({
      status: 'skipped',
      reason: 'not-pending',
    });
    expect(await ingestDocument(services, { ...message, attempt: 2 }, silent)).toEqual({
      status: 'skipped',
      reason: 'other-attempt',
    });
    expect(await ingestDocument(services, { ...message, documentId: 'f'.repeat(32) }, silent)).toEqual({
      status: 'skipped',
      reason: 'no-document',
    });
    expect(model.requests).toHaveLength(requests);
  });

  it('finishes a run that stopped after writing its chunks, removing what an earlier, longer cut left', async () => {
    const message = await markdown();
    const stopping: IngestServices = {
      ...services,
      documents: {
        ...stores.documents,
        get: stores.documents.get.bind(stores.documents),
        create: stores.documents.create.bind(stores.documents),
        list: stores.documents.list.bind(stores.documents),
        delete: stores.documents.delete.bind(stores.documents),
        // Marking processing succeeds; marking ready is where the process stops.
        replace: (document, version) =>
          document.status === 'ready'
            ? Promise.reject(new Error('the process stopped'))
            : stores.documents.replace(document, version),
      },
    };
    await expect(ingestDocument(stopping, message, silent)).rejects.toThrow('the process stopped');
    expect(record(message)?.status).toBe('processing');
    const written = stores.chunks.of(LIBRARY, message.documentId);
    // An earlier run had cut the document into more chunks.
    await stores.chunks.put([{ ...written[0]!, id: chunkId(message.documentId, 40), index: 40 }]);
    expect(await ingestDocument(services, message, silent, { deliveryCount: 2 })).toMatchObject({
      status: 'ready',
    });
    expect(stores.chunks.of(LIBRARY, message.documentId).map((c) => c.index)).toEqual(
      written.map((c) => c.index),
    );
  });
});

describe('ingestDocument: a document that cannot be indexed', () => {
  it('fails a corrupt PDF with the reason, keeping no chunk and no bytes', async () => {
    const message = await queued({
      contentType: 'application/pdf',
      content: new TextEncoder().encode('%PDF-1.4 garbage'),
    });
    const outcome = await ingestDocument(services, message, log);
    expect(outcome).toMatchObject({ status: 'failed', failure: { code: 'unreadable' } });
    expect(record(message)).toMatchObject({ status: 'failed', failure: { code: 'unreadable' } });
    expect(stores.chunks.count).toBe(0);
    expect(stores.uploads.parts.size).toBe(0);
    expect(warnings[0]).toMatch(/failed \(unreadable\)/);
  });

  it('fails a document it cannot read on its first delivery, with a reason its owner understands', async () => {
    const deep = await markdown(`${'> '.repeat(50_000)}Quoted.`);

    const outcome = await ingestDocument(services, deep, log, { deliveryCount: 1 });

    // Settled, not thrown: the worker completes the message, which is not delivered again.
    expect(outcome).toMatchObject({ status: 'failed', failure: { code: 'too_nested' } });
    expect(record(deep)?.failure?.reason).toBe(
      'The document could not be read: it is too deeply nested (more than 256 levels of quotes, lists or elements).',
    );
    expect(stores.chunks.count).toBe(0);
    expect(stores.uploads.parts.size).toBe(0);
  });

  it('fails a document whose bytes are gone, and one that makes more chunks than allowed', async () => {
    const gone = await markdown();
    await stores.uploads.remove(gone.documentId, 1, record(gone)!.parts);
    expect(await ingestDocument(services, gone, silent)).toMatchObject({
      failure: { code: 'upload_missing' },
    });
    const big = await markdown(`${HANDBOOK}\n## More\n\nMore text about trains.\n`);
    expect(
      await ingestDocument({ ...services, settings: { ...services.settings, maxChunks: 2 } }, big, silent),
    ).toMatchObject({ status: 'failed', failure: { code: 'too_large' } });
    expect(stores.chunks.count).toBe(0);
    expect(model.requests).toEqual([]);
  });

  it('retries a failing embeddings endpoint over deliveries, then fails the document', async () => {
    const message = await markdown();
    model.failures.push(new LlmError('The model is busy (429).', { retryable: true, providerStatus: 429 }));
    await expect(ingestDocument(services, message, silent, { deliveryCount: 1 })).rejects.toThrow(LlmError);
    expect(record(message)?.status).toBe('processing');
    // The batches embedded before the failure may be stored: a document being processed is never searched.
    expect(
      await searchKnowledge(
        { chunks: stores.chunks, llm: model, relevance: EVERY_HIT },
        'user_001',
        'parental',
        5,
      ),
    ).toEqual([]);
    model.failures.push(new LlmError('The model is busy (429).', { retryable: true, providerStatus: 429 }));
    const outcome = await ingestDocument(services, message, silent, { deliveryCount: EMBEDDING_DELIVERIES });
    expect(outcome).toMatchObject({ status: 'failed', failure: { code: 'embedding_failed' } });
    expect(record(message)?.failure?.reason).toMatch(/busy/);
    expect(stores.chunks.count).toBe(0);
  });

  it('fails at once on a refusal retrying cannot change, and on anything else at the last delivery', async () => {
    const refused = await markdown();
    model.failures.push(new LlmError('The input is too long.', { retryable: false, providerStatus: 400 }));
    expect(await ingestDocument(services, refused, silent)).toMatchObject({
      failure: { code: 'embedding_failed' },
    });
    const other = await markdown(`${HANDBOOK}\nAnother paragraph.\n`);
    model.failures.push(new Error('socket hang up'));
    await expect(ingestDocument(services, other, silent)).rejects.toThrow('socket hang up');
    model.failures.push(new Error('socket hang up'));
    expect(
      await ingestDocument(services, other, silent, { deliveryCount: MAX_DELIVERY_COUNT }),
    ).toMatchObject({ status: 'failed', failure: { code: 'ingestion_failed' } });
  });
});

describe('ingestDocument: a document uploaded again while a run ends', () => {
  it("removes only its own attempt's bytes, never those of the upload that started the next attempt", async () => {
    const message = await markdown();
    const uploadAgain = () =>
      uploadDocument(
        {
          ...stores,
          publisher: new RecordingPublisher(),
          settings: { maxDocumentBytes: 1_000_000, sharedLibrary: { users: [], groups: [] } },
        },
        { userId: 'user_001' },
        { contentType: 'text/markdown', content: new TextEncoder().encode(HANDBOOK) },
      );
    const racing: IngestServices = {
      ...services,
      documents: {
        get: stores.documents.get.bind(stores.documents),
        create: stores.documents.create.bind(stores.documents),
        list: stores.documents.list.bind(stores.documents),
        delete: stores.documents.delete.bind(stores.documents),
        // The owner uploads the document again the moment this run has marked it failed.
        replace: async (document, version) => {
          const written = await stores.documents.replace(document, version);
          if (document.status === 'failed' && written === 'written') await uploadAgain();
          return written;
        },
      },
    };
    model.failures.push(new LlmError('The input is too long.', { retryable: false, providerStatus: 400 }));
    expect(await ingestDocument(racing, message, silent)).toMatchObject({ status: 'failed' });
    expect(record(message)).toMatchObject({ status: 'queued', attempt: 2 });
    // The new attempt finds its bytes and is indexed.
    expect(await ingestDocument(services, { ...message, attempt: 2 }, silent)).toMatchObject({
      status: 'ready',
    });
    expect(record(message)?.status).toBe('ready');
  });
});

describe('ingestDocument: a document deleted while it is indexed', () => {
  it('removes the chunks it wrote after the delete, and leaves nothing', async () => {
    const message = await markdown();
    const racing: IngestServices = {
      ...services,
      chunks: {
        ...stores.chunks,
        search: stores.chunks.search.bind(stores.chunks),
        remove: stores.chunks.remove.bind(stores.chunks),
        // The owner deletes the document just before the worker's chunks land.
        put: async (chunks) => {
          await deleteDocument(stores, 'user_001', message.documentId);
          await stores.chunks.put(chunks);
        },
      },
    };
    expect(await ingestDocument(racing, message, silent)).toEqual({ status: 'abandoned', reason: 'deleted' });
    expect(record(message)).toBeUndefined();
    expect(stores.chunks.count).toBe(0);
  });
});

describe('ingestDocument: chunks that outlived their document', () => {
  it('removes them when the message comes again for a document gone, failed or being deleted', async () => {
    for (const status of ['failed', 'deleting'] as const) {
      const message = await markdown(`${HANDBOOK}\n${status}\n`);
      await stores.chunks.put([leftChunk(message, 0), leftChunk(message, 1)]);
      await setRecord(message, { status });
      expect(await ingestDocument(services, message, silent)).toEqual({
        status: 'skipped',
        reason: 'not-pending',
      });
      expect(stores.chunks.of(LIBRARY, message.documentId)).toEqual([]);
    }
    const gone = await markdown(`${HANDBOOK}\ngone\n`);
    await stores.chunks.put([leftChunk(gone, 0)]);
    await stores.documents.delete(gone.library, gone.documentId);
    expect(await ingestDocument(services, gone, silent)).toEqual({
      status: 'skipped',
      reason: 'no-document',
    });
    expect(stores.chunks.of(LIBRARY, gone.documentId)).toEqual([]);
  });

  it('keeps the chunks of a ready document, and of the next attempt being indexed, on an old message', async () => {
    const message = await markdown();
    await ingestDocument(services, message, silent);
    const ready = stores.chunks.of(LIBRARY, message.documentId).length;
    expect(await ingestDocument(services, message, silent)).toMatchObject({ status: 'skipped' });
    expect(stores.chunks.of(LIBRARY, message.documentId)).toHaveLength(ready);
    await setRecord(message, { status: 'processing', attempt: 2 });
    expect(await ingestDocument(services, message, silent)).toEqual({
      status: 'skipped',
      reason: 'other-attempt',
    });
    expect(stores.chunks.of(LIBRARY, message.documentId)).toHaveLength(ready);
  });

  it('removes what it stored before it failed when the document was deleted meanwhile, after the last write lands', async () => {
    const message = await markdown();
    let requests = 0;
    const racing: IngestServices = {
      ...services,
      llm: {
        // The first batch is embedded; the second is refused, just after the owner's delete went through.
        embed: async (texts) => {
          requests += 1;
          if (requests === 1) return model.embed(texts);
          await stores.documents.delete(message.library, message.documentId);
          throw nonRetryable();
        },
      },
      // The first batch's chunks land late, after the second batch failed.
      chunks: chunksWith({
        put: async (chunks) => {
          await new Promise((resolve) => setTimeout(resolve, 20));
          await stores.chunks.put(chunks);
        },
      }),
    };
    expect(await ingestDocument(racing, message, silent)).toEqual({ status: 'abandoned', reason: 'deleted' });
    // Nothing of the run is still under way to land later.
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(stores.chunks.count).toBe(0);
  });
});

describe('ingestDocument: two runs of one message at once', () => {
  it("marks the document failed before removing chunks, so a run that lost leaves the other's ready chunks", async () => {
    const message = await markdown();
    let refused = false;
    let raced = false;
    const losing: IngestServices = {
      ...services,
      // This run's embeddings are refused; the other run's (services.llm) are made.
      llm: {
        embed: () => {
          refused = true;
          return Promise.reject(nonRetryable());
        },
      },
      documents: documentsWith({
        // As this run goes to settle the document as failed, the other run indexes it and marks it ready.
        get: async (library, documentId) => {
          const read = await stores.documents.get(library, documentId);
          if (refused && !raced) {
            raced = true;
            expect(await ingestDocument(services, message, silent)).toMatchObject({ status: 'ready' });
          }
          return read;
        },
      }),
    };
    expect(await ingestDocument(losing, message, silent)).toEqual({ status: 'abandoned', reason: 'settled' });
    expect(raced).toBe(true);
    const stored = record(message);
    expect(stored?.status).toBe('ready');
    expect(stores.chunks.of(LIBRARY, message.documentId)).toHaveLength(stored!.chunkCount!);
  });
});

describe('ingestDocument: the last delivery', () => {
  it('fails the document when its chunks cannot be written, instead of leaving it processing', async () => {
    const message = await markdown();
    const broken: IngestServices = {
      ...services,
      chunks: chunksWith({ put: () => Promise.reject(new Error('the chunks store is unavailable')) }),
    };
    await expect(ingestDocument(broken, message, silent, { deliveryCount: 1 })).rejects.toThrow(
      'the chunks store is unavailable',
    );
    expect(record(message)?.status).toBe('processing');
    expect(
      await ingestDocument(broken, message, silent, { deliveryCount: MAX_DELIVERY_COUNT }),
    ).toMatchObject({ status: 'failed', failure: { code: 'ingestion_failed' } });
    expect(record(message)).toMatchObject({
      status: 'failed',
      failure: { code: 'ingestion_failed', reason: expect.stringMatching(/chunks store is unavailable/) },
    });
    expect(stores.uploads.parts.size).toBe(0);
  });

  it('fails the document when it cannot be marked ready, and keeps none of its chunks', async () => {
    const message = await markdown();
    const stuck: IngestServices = {
      ...services,
      documents: documentsWith({
        replace: (document, version) =>
          document.status === 'ready'
            ? Promise.resolve('conflict')
            : stores.documents.replace(document, version),
      }),
    };
    expect(await ingestDocument(stuck, message, silent, { deliveryCount: MAX_DELIVERY_COUNT })).toMatchObject(
      { status: 'failed', failure: { code: 'ingestion_failed' } },
    );
    expect(record(message)?.status).toBe('failed');
    expect(stores.chunks.count).toBe(0);
  });

  it('fails the document when it cannot even be marked processing', async () => {
    const message = await markdown();
    const busy: IngestServices = {
      ...services,
      documents: documentsWith({
        replace: (document, version) =>
          document.status === 'processing'
            ? Promise.reject(new Error('the documents store timed out'))
            : stores.documents.replace(document, version),
      }),
    };
    await expect(ingestDocument(busy, message, silent)).rejects.toThrow('timed out');
    expect(record(message)?.status).toBe('queued');
    expect(await ingestDocument(busy, message, silent, { deliveryCount: MAX_DELIVERY_COUNT })).toMatchObject({
      status: 'failed',
      failure: { code: 'ingestion_failed' },
    });
    expect(record(message)?.status).toBe('failed');
  });
});

describe('ingestDocument: a long document', () => {
  it('stores each batch as its vectors come, at most two batches in flight, and keeps nothing else', async () => {
    const sections = Array.from(
      { length: 12 },
      (_, i) => `## Section ${i}\n\nParental leave rule ${i} is written here in a sentence of its own.`,
    );
    const message = await markdown(['# Long handbook', '', ...sections].join('\n\n'));
    const events: string[] = [];
    let inFlight = 0;
    let most = 0;
    const watched: IngestServices = {
      ...services,
      llm: {
        embed: async (texts) => {
          inFlight += 1;
          most = Math.max(most, inFlight);
          events.push(`embed ${texts.length}`);
          await new Promise((resolve) => setTimeout(resolve, 1));
          return model.embed(texts);
        },
      },
      chunks: chunksWith({
        put: async (chunks) => {
          events.push(`put ${chunks.length}`);
          await stores.chunks.put(chunks);
          inFlight -= 1;
        },
      }),
    };
    const outcome = await ingestDocument(watched, message, silent);
    expect(outcome).toMatchObject({ status: 'ready' });
    const puts = events.filter((event) => event.startsWith('put'));
    const embeds = events.filter((event) => event.startsWith('embed'));
    expect(embeds.length).toBeGreaterThanOrEqual(6);
    // One write per batch, of that batch's chunks, the first long before the last batch is embedded.
    expect(puts).toEqual(embeds.map((event) => event.replace('embed', 'put')));
    expect(events.indexOf('put 2')).toBeLessThan(events.lastIndexOf('embed 2'));
    // Batches between their embedding and their write: never more than two.
    expect(most).toBeLessThanOrEqual(2);
    expect(stores.chunks.of(LIBRARY, message.documentId)).toHaveLength(
      (outcome as { chunkCount: number }).chunkCount,
    );
  });
});
