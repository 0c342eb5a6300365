// The knowledge base's endpoints and worker in process: real HttpRequest objects (JSON and multipart bodies),
// the real use-cases, in-memory stores and a model whose embeddings count keywords.
import azureFunctions from '@azure/functions';
import { beforeEach, describe, expect, it } from 'vitest';
import { provideApp, type App } from '../shared/app/app.js';
import type { EndpointDefinition } from '../shared/http/endpoint.js';
import {
  KNOWLEDGE_INGEST_QUEUE,
  privateLibrary,
  SHARED_LIBRARY,
  type DocumentView,
  type IngestDocumentMessage,
  type KnowledgeSearchHit,
} from '../shared/knowledge/contracts.js';
import { asUser, callEndpoint, type CallOptions, type Reply } from '../test/support/call-endpoint.js';
import { KeywordEmbeddings } from '../test/support/in-memory-knowledge.js';
import { createTestApp, type TestApp } from '../test/support/in-memory-ports.js';
import {
  deleteDocumentEndpoint,
  getDocumentEndpoint,
  knowledgeFunctions,
  knowledgeWorker,
  listDocumentsEndpoint,
  searchKnowledgeEndpoint,
  uploadDocumentEndpoint,
} from './knowledge.js';

const { InvocationContext } = azureFunctions;

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
].join('\n');
const base64 = (text: string) => Buffer.from(text).toString('base64');

let app: TestApp;
let model: KeywordEmbeddings;
beforeEach(() => {
  model = new KeywordEmbeddings(['parental', 'leave', 'expenses', 'receipts']);
  app = createTestApp({
    llm: model,
    settings: { KNOWLEDGE_MAX_DOCUMENT_BYTES: '2000', KNOWLEDGE_SHARED_LIBRARY: 'user_003' },
  });
  provideApp(() => Promise.resolve(app));
});

function call<P, Q, B>(
  definition: EndpointDefinition<App, P, Q, B>,
  user: string,
  options: CallOptions = {},
): Promise<Reply> {
  return callEndpoint(definition, app, { ...options, headers: asUser(user, options.headers) });
}

async function upload(user: string, json: unknown): Promise<Reply> {
  return call(uploadDocumentEndpoint, user, { json });
}

/** Delivers every queued ingestion message to the worker, as Service Bus would. */
async function runWorker(): Promise<void> {
  const queued = app.fakes.publisher.published.filter((p) => p.entity === KNOWLEDGE_INGEST_QUEUE);
  app.fakes.publisher.published.length = 0;
  for (const { message } of queued)
    await knowledgeWorker(
      message.body,
      new InvocationContext({ invocationId: message.messageId, functionName: 'knowledgeWorker' }),
    );
}

const documentOf = async (reply: Reply) => (await reply.json<{ document: DocumentView }>()).document;

describe('POST /api/knowledge/documents', () => {
  it('queues a JSON upload (202, Location) and the worker makes it ready and searchable', async () => {
    const reply = await upload('user_001', {
      fileName: 'handbook.md',
      contentType: 'text/markdown; charset=utf-8',
      contentBase64: base64(HANDBOOK),
    });
    expect(reply.status).toBe(202);
    const document = await documentOf(reply);
    expect(reply.headers.get('location')).toBe(`/api/knowledge/documents/${document.documentId}`);
    expect(document).toMatchObject({ title: 'handbook', format: 'markdown', status: 'queued' });
    const message: IngestDocumentMessage = {
      library: privateLibrary('user_001'),
      documentId: document.documentId,
      attempt: 1,
    };
    expect(app.fakes.publisher.published).toEqual([
      {
        entity: KNOWLEDGE_INGEST_QUEUE,
        message: {
          body: message,
          messageId: `${document.documentId}.1.${Date.parse(document.createdAt)}`,
        },
      },
    ]);

    await runWorker();
    const ready = await call(getDocumentEndpoint, 'user_001', {
      params: { documentId: document.documentId },
    });
    const indexed = await documentOf(ready);
    expect(indexed).toMatchObject({ status: 'ready', pageCount: 1 });
    expect(indexed.chunkCount).toBeGreaterThan(0);

    const search = await call(searchKnowledgeEndpoint, 'user_001', {
      json: { query: 'parental leave', limit: 3 },
    });
    expect(search.status).toBe(200);
    const { results } = await search.json<{ results: KnowledgeSearchHit[] }>();
    expect(results[0]).toMatchObject({
      documentId: document.documentId,
      heading: 'Parental leave',
      citation: 'handbook › Parental leave',
      library: 'private',
    });
    expect(results[0]?.text).toMatch(/sixteen weeks/);

    // The same content again, once ready: 200 with the same document.
    const again = await upload('user_001', { fileName: 'handbook.md', contentBase64: base64(HANDBOOK) });
    expect(again.status).toBe(200);
    expect((await documentOf(again)).documentId).toBe(document.documentId);
  });

  it('takes a multipart form: the file part with its name and type, and a title field', async () => {
    const form = new FormData();
    form.append('title', 'Handbook');
    form.append('file', new Blob([HANDBOOK], { type: 'text/markdown' }), 'handbook.md');
    const reply = await call(uploadDocumentEndpoint, 'user_001', { form });
    expect(reply.status).toBe(202);
    expect(await documentOf(reply)).toMatchObject({
      title: 'Handbook',
      fileName: 'handbook.md',
      format: 'markdown',
    });
    const noFile = new FormData();
    noFile.append('title', 'Handbook');
    const missing = await call(uploadDocumentEndpoint, 'user_001', { form: noFile });
    expect(missing.status).toBe(400);
    expect(await missing.json()).toMatchObject({ detail: expect.stringMatching(/`file` part/) });
  });

  it("puts a librarian's upload in the shared library, which every user then searches", async () => {
    const reply = await upload('user_003', { fileName: 'handbook.md', contentBase64: base64(HANDBOOK) });
    expect(await documentOf(reply)).toMatchObject({ library: 'shared', ownedByYou: true });
    await runWorker();
    const search = await call(searchKnowledgeEndpoint, 'user_002', { json: { query: 'expenses receipts' } });
    const { results } = await search.json<{ results: KnowledgeSearchHit[] }>();
    expect(results[0]).toMatchObject({ library: 'shared', heading: 'Expenses' });
    const list = await call(listDocumentsEndpoint, 'user_002', {
      path: '/api/knowledge/documents?library=shared',
    });
    expect((await list.json<{ documents: DocumentView[] }>()).documents).toEqual([
      expect.objectContaining({ library: 'shared', ownedByYou: false, status: 'ready' }),
    ]);
  });

  it('refuses bad uploads with problem+json, storing and queueing nothing', async () => {
    const cases: [unknown, number, RegExp][] = [
      [{ fileName: 'big.md', contentBase64: base64('x'.repeat(2_001)) }, 413, /larger than 2000 bytes/],
      [
        { fileName: 'photo.png', contentType: 'image/png', contentBase64: base64('png') },
        415,
        /not supported/,
      ],
      [{ fileName: 'report.pdf', contentBase64: base64('not a pdf') }, 415, /%PDF-/],
      [{ fileName: 'empty.md', contentBase64: '' }, 400, /contentBase64 is empty/],
      [{ fileName: 'blank.txt', contentBase64: base64('  \n ') }, 400, /no text/],
      [{ fileName: 'notes.txt', contentBase64: 'not base64!' }, 400, /not valid base64/],
      [
        { title: 'invoice\u202Efdp.exe', fileName: 'notes.md', contentBase64: base64('# Notes') },
        400,
        /title must not contain bidirectional control characters/,
      ],
      [
        { fileName: 'C:\\docs\\\u0000\u202E', contentBase64: base64('# Notes') },
        400,
        /fileName has no name once its path and control characters are removed/,
      ],
    ];
    for (const [json, status, detail] of cases) {
      const reply = await upload('user_001', json);
      expect(reply.status, JSON.stringify(json)).toBe(status);
      expect(reply.headers.get('content-type')).toBe('application/problem+json');
      expect(await reply.json()).toMatchObject({ status, detail: expect.stringMatching(detail) });
    }
    const tooLargeBody = await call(uploadDocumentEndpoint, 'user_001', {
      json: { fileName: 'huge.md', contentBase64: base64('x'.repeat(80_000)) },
    });
    expect(tooLargeBody.status).toBe(413);
    const notJson = await call(uploadDocumentEndpoint, 'user_001', {
      body: HANDBOOK,
      headers: { 'content-type': 'text/markdown' },
    });
    expect(notJson.status).toBe(415);
    expect(app.fakes.knowledgeDocuments.records.size).toBe(0);
    expect(app.fakes.knowledgeUploads.parts.size).toBe(0);
    expect(app.fakes.publisher.published).toEqual([]);
  });
});

describe('titles and file names shown to users', () => {
  const titleOf = async (reply: Reply) => {
    expect(reply.status).toBe(202);
    const document = await documentOf(reply);
    return {
      title: document.title,
      fileName: app.fakes.knowledgeDocuments.document(privateLibrary('user_001'), document.documentId)
        ?.fileName,
    };
  };

  it("takes a JSON upload's title from the file name's last path segment, cleaned", async () => {
    expect(
      await titleOf(
        await upload('user_001', { fileName: 'C:\\x\\evil\\0.md', contentBase64: base64('# A\n\none') }),
      ),
    ).toEqual({ title: '0', fileName: '0.md' });
    expect(
      await titleOf(
        await upload('user_001', { fileName: 'C:\\x\\evil\u0000.md', contentBase64: base64('# B\n\ntwo') }),
      ),
    ).toEqual({ title: 'evil', fileName: 'evil.md' });
    expect(
      await titleOf(
        await upload('user_001', {
          fileName: '../report\u202Efdp.md',
          contentBase64: base64('# C\n\nthree'),
        }),
      ),
    ).toEqual({ title: 'reportfdp', fileName: 'reportfdp.md' });
  });

  it("cleans a form's file name the same way", async () => {
    const form = new FormData();
    form.append(
      'file',
      new Blob(['# D\n\nfour'], { type: 'text/markdown' }),
      'C:\\x\\in\u202Evoice\u0007.md',
    );
    expect(await titleOf(await call(uploadDocumentEndpoint, 'user_001', { form }))).toEqual({
      title: 'invoice',
      fileName: 'invoice.md',
    });
  });

  it("refuses a form's title that cannot be shown safely, storing nothing", async () => {
    const form = new FormData();
    form.append('title', 'Q3 \u2066report\u2069');
    form.append('file', new Blob(['# E'], { type: 'text/markdown' }), 'e.md');
    const reply = await call(uploadDocumentEndpoint, 'user_001', { form });
    expect(reply.status).toBe(400);
    expect(await reply.json()).toMatchObject({
      detail: expect.stringMatching(/title must not contain bidirectional/),
    });
    expect(app.fakes.knowledgeDocuments.records.size).toBe(0);
  });
});

describe('another user', () => {
  let documentId: string;
  beforeEach(async () => {
    documentId = (
      await documentOf(await upload('user_001', { fileName: 'handbook.md', contentBase64: base64(HANDBOOK) }))
    ).documentId;
    await runWorker();
  });

  it('neither lists, reads, searches nor deletes a private document (404, as if it did not exist)', async () => {
    const list = await call(listDocumentsEndpoint, 'user_002');
    expect((await list.json<{ documents: DocumentView[] }>()).documents).toEqual([]);
    const get = await call(getDocumentEndpoint, 'user_002', { params: { documentId } });
    expect(get.status).toBe(404);
    const search = await call(searchKnowledgeEndpoint, 'user_002', { json: { query: 'parental leave' } });
    expect((await search.json<{ results: unknown[] }>()).results).toEqual([]);
    const remove = await call(deleteDocumentEndpoint, 'user_002', { params: { documentId } });
    expect(remove.status).toBe(404);
    expect(app.fakes.knowledgeDocuments.document(privateLibrary('user_001'), documentId)?.status).toBe(
      'ready',
    );
  });

  it('cannot delete a shared document they did not upload (403), while its uploader can (204)', async () => {
    const shared = await documentOf(
      await upload('user_003', { fileName: 'shared.md', contentBase64: base64('# Shared\n\nExpenses.') }),
    );
    await runWorker();
    const forbidden = await call(deleteDocumentEndpoint, 'user_001', {
      params: { documentId: shared.documentId },
    });
    expect(forbidden.status).toBe(403);
    expect(await forbidden.json()).toMatchObject({ code: 'forbidden' });
    const removed = await call(deleteDocumentEndpoint, 'user_003', {
      params: { documentId: shared.documentId },
    });
    expect(removed.status).toBe(204);
    expect(app.fakes.knowledgeDocuments.document(SHARED_LIBRARY, shared.documentId)).toBeUndefined();
  });
});

describe('DELETE /api/knowledge/documents/{documentId}', () => {
  it('removes the document and every chunk: search no longer finds it', async () => {
    const { documentId } = await documentOf(
      await upload('user_001', { fileName: 'handbook.md', contentBase64: base64(HANDBOOK) }),
    );
    await runWorker();
    const removed = await call(deleteDocumentEndpoint, 'user_001', { params: { documentId } });
    expect(removed.status).toBe(204);
    expect(app.fakes.knowledgeChunks.count).toBe(0);
    const search = await call(searchKnowledgeEndpoint, 'user_001', { json: { query: 'parental leave' } });
    expect((await search.json<{ results: unknown[] }>()).results).toEqual([]);
    const gone = await call(getDocumentEndpoint, 'user_001', { params: { documentId } });
    expect(gone.status).toBe(404);
  });

  it('refuses a malformed document id (400)', async () => {
    const reply = await call(deleteDocumentEndpoint, 'user_001', { params: { documentId: 'nope' } });
    expect(reply.status).toBe(400);
  });
});

describe('knowledgeWorker', () => {
  it('refuses a malformed message (it is redelivered, then dead-lettered with the reason)', async () => {
    await expect(
      knowledgeWorker(
        { library: 'x', documentId: 'not-an-id', attempt: 1 },
        new InvocationContext({ invocationId: '1', functionName: 'knowledgeWorker' }),
      ),
    ).rejects.toThrow(/documentId/);
  });

  it('is a non-session queue trigger beside the five endpoints', () => {
    expect(knowledgeFunctions.map((f) => f.name)).toEqual([
      'uploadDocument',
      'listDocuments',
      'getDocument',
      'deleteDocument',
      'searchKnowledge',
      'knowledgeWorker',
    ]);
    expect(knowledgeFunctions.at(-1)).toMatchObject({
      kind: 'serviceBus',
      source: { queueName: KNOWLEDGE_INGEST_QUEUE },
      isSessionsEnabled: false,
    });
  });
});
