// The knowledge base end to end over the local runtime, driven as a client drives it: uploads, search, the
// shared library, deletes, repeated content and bad uploads.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalRuntime } from '../../local/runtime.js';
import {
  KNOWLEDGE_CHUNKS_CONTAINER,
  type DocumentView,
  type KnowledgeSearchHit,
} from '../../shared/knowledge/contracts.js';
import type { ConversationMessage } from '../../shared/conversation/messages.js';
import { assembleText, ChatClient, DEV_IDENTITY_HEADER, expectStatus } from '../support/chat-client.js';
import { startTestRuntime } from '../support/local-runtime.js';
import { SECURITY_PAGES } from '../support/labelled-queries.js';
import { makePdf } from '../support/make-pdf.js';

const MAX_DOCUMENT_BYTES = 32 * 1024;

const HANDBOOK = [
  '# Employee Handbook',
  '',
  '## Parental leave',
  '',
  'Parental leave lasts sixteen weeks and is paid in full. Tell your manager a month ahead.',
  '',
  '## Expenses',
  '',
  'Expenses are filed with receipts within thirty days of purchase.',
  '',
].join('\n');

const CANTEEN = '# Canteen\n\nThe canteen serves vegetarian lasagne every Thursday at noon.\n';

describe('the knowledge base over the local runtime', () => {
  let runtime: LocalRuntime;

  beforeAll(async () => {
    runtime = await startTestRuntime({
      settings: {
        KNOWLEDGE_SHARED_LIBRARY: 'user_003',
        KNOWLEDGE_MAX_DOCUMENT_BYTES: String(MAX_DOCUMENT_BYTES),
        KNOWLEDGE_CHUNK_TOKENS: '60',
        KNOWLEDGE_CHUNK_OVERLAP_TOKENS: '0',
      },
    });
  });
  afterAll(async () => {
    await runtime?.stop();
  });

  const call = (user: string, path: string, init: RequestInit = {}) =>
    fetch(`${runtime.url}/api/knowledge/${path}`, {
      ...init,
      headers: { [DEV_IDENTITY_HEADER]: user, ...(init.headers as Record<string, string>) },
    });

  const uploadJson = (user: string, body: object) =>
    call(user, 'documents', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });

  const uploadMarkdown = (user: string, text: string, fileName = 'handbook.md') =>
    uploadJson(user, {
      fileName,
      contentType: 'text/markdown',
      contentBase64: Buffer.from(text).toString('base64'),
    });

  const uploadForm = (user: string, content: Uint8Array, fileName: string, type: string, title?: string) => {
    const form = new FormData();
    if (title !== undefined) form.append('title', title);
    form.append('file', new Blob([content], { type }), fileName);
    return call(user, 'documents', { method: 'POST', body: form });
  };

  async function accepted(response: Response, status = 202): Promise<DocumentView> {
    return (await expectStatus<{ document: DocumentView }>(response, status)).document;
  }

  /** Polls GET until the document is ready or failed, as a client would (a PDF read is slow on a busy machine). */
  async function settled(user: string, documentId: string): Promise<DocumentView> {
    const deadline = Date.now() + 120_000;
    for (;;) {
      const { document } = await expectStatus<{ document: DocumentView }>(
        await call(user, `documents/${documentId}`),
        200,
      );
      if (document.status === 'ready' || document.status === 'failed') return document;
      if (Date.now() > deadline) throw new Error(`document ${documentId} is still ${document.status}`);
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  }

  async function search(user: string, query: string, limit = 5): Promise<KnowledgeSearchHit[]> {
    const response = await call(user, 'search', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query, limit }),
    });
    return (await expectStatus<{ results: KnowledgeSearchHit[] }>(response, 200)).results;
  }

  async function storedChunks(documentId: string): Promise<number> {
    const { resources } = await runtime.clients.database
      .container(KNOWLEDGE_CHUNKS_CONTAINER)
      .items.query<number>({
        query: 'SELECT VALUE COUNT(1) FROM c WHERE c.documentId = @id',
        parameters: [{ name: '@id', value: documentId }],
      })
      .fetchAll();
    return resources[0] ?? 0;
  }

  let handbook: DocumentView;
  let security: DocumentView;

  it('indexes a Markdown upload (JSON) and a PDF upload (multipart), and search finds the right chunk', async () => {
    const markdown = await accepted(await uploadMarkdown('user_001', HANDBOOK));
    expect(markdown).toMatchObject({ status: 'queued', library: 'private', format: 'markdown' });
    const pdf = await accepted(
      await uploadForm(
        'user_001',
        makePdf(SECURITY_PAGES, { title: 'Security Guide' }),
        'security.pdf',
        'application/pdf',
      ),
    );
    handbook = await settled('user_001', markdown.documentId);
    security = await settled('user_001', pdf.documentId);
    expect(handbook).toMatchObject({ status: 'ready', title: 'handbook', pageCount: 1 });
    expect(security).toMatchObject({ status: 'ready', title: 'security', format: 'pdf', pageCount: 3 });
    expect(handbook.chunkCount).toBeGreaterThanOrEqual(2);

    const leave = await search('user_001', 'how long is parental leave?');
    expect(leave[0]).toMatchObject({
      documentId: handbook.documentId,
      heading: 'Parental leave',
      citation: 'handbook › Parental leave',
    });
    expect(leave[0]?.text).toMatch(/sixteen weeks/);

    const laptops = await search('user_001', 'laptop encrypted recovery passphrase');
    expect(laptops[0]).toMatchObject({
      documentId: security.documentId,
      pages: [2],
      citation: 'security, p. 2',
    });
    expect(laptops[0]?.text).toMatch(/service desk/);

    const list = await expectStatus<{ documents: DocumentView[] }>(await call('user_001', 'documents'), 200);
    expect(list.documents.map((d) => d.documentId)).toEqual([security.documentId, handbook.documentId]);
  });

  it('answers a question about the handbook from it: the turn searches, streams the sources first, keeps them', async () => {
    // The offline model (the runtime's model here) searches the knowledge base when a message speaks of "the
    // handbook" (its stand-in rule); the search is the product's own, over the document just indexed.
    const client = new ChatClient(runtime.url, 'user_001');
    const sessionId = await client.startSession();
    const chatMessageId = await client.send(sessionId, 'What does the handbook say about parental leave?');
    const frames = await client.stream(sessionId, chatMessageId);
    const events = frames.map((frame) => frame.data);
    const types = events.map((event) => event.type);
    expect(types).toContain('tool-call');
    const call = events.find((event) => event.type === 'tool-call');
    expect(call).toMatchObject({ name: 'search_knowledge_base' });
    const sourcesAt = types.indexOf('sources');
    expect(sourcesAt).toBeGreaterThan(types.indexOf('tool-result'));
    expect(sourcesAt).toBeLessThan(types.indexOf('content'));
    const sources = events.find((event) => event.type === 'sources');
    if (sources?.type !== 'sources') throw new Error('no sources event');
    expect(sources.sources[0]).toMatchObject({
      documentId: handbook.documentId,
      heading: 'Parental leave',
      citation: 'handbook › Parental leave',
    });
    expect(sources.sources[0]?.excerpt).toMatch(/sixteen weeks/);
    const answer = assembleText(events);
    expect(answer).toContain('[handbook › Parental leave]');

    // The stored answer keeps them: the conversation as the History API shows it.
    const conversation = await expectStatus<{ messages: ConversationMessage[] }>(
      await fetch(`${runtime.url}/api/history/conversations/${sessionId}`, { headers: client.headers() }),
      200,
    );
    const stored = conversation.messages.find((message) => message.role === 'assistant');
    expect(stored?.content).toBe(answer);
    expect(stored?.sources).toEqual(sources.sources);
    // Another user asking the same finds nothing of user_001's private handbook.
    const other = new ChatClient(runtime.url, 'user_002');
    const otherSession = await other.startSession();
    const otherTurn = await other.send(otherSession, 'What does the handbook say about parental leave?');
    const otherEvents = (await other.stream(otherSession, otherTurn)).map((frame) => frame.data);
    expect(otherEvents.map((event) => event.type)).not.toContain('sources');
    expect(assembleText(otherEvents)).toMatch(/found nothing in the knowledge base/);
  });

  it('answers the same content again with the same document: 200 once it is ready', async () => {
    const again = await accepted(await uploadMarkdown('user_001', HANDBOOK), 200);
    expect(again).toMatchObject({ documentId: handbook.documentId, status: 'ready' });
  });

  it("keeps a user's documents from every other user: not listed, not found, not searched, not deleted", async () => {
    const list = await expectStatus<{ documents: DocumentView[] }>(await call('user_002', 'documents'), 200);
    expect(list.documents).toEqual([]);
    expect((await call('user_002', `documents/${handbook.documentId}`)).status).toBe(404);
    const hits = await search('user_002', 'parental leave sixteen weeks');
    expect(hits.map((hit) => hit.documentId)).not.toContain(handbook.documentId);
    const remove = await call('user_002', `documents/${handbook.documentId}`, { method: 'DELETE' });
    expect(remove.status).toBe(404);
    expect(remove.headers.get('content-type')).toBe('application/problem+json');
    expect((await settled('user_001', handbook.documentId)).status).toBe('ready');
  });

  it("puts a librarian's document in the shared library, which every user searches and only they delete", async () => {
    const shared = await accepted(await uploadMarkdown('user_003', CANTEEN, 'canteen.md'));
    expect(shared.library).toBe('shared');
    await settled('user_003', shared.documentId);
    for (const user of ['user_001', 'user_002']) {
      const hits = await search(user, 'vegetarian lasagne thursday');
      expect(hits[0]).toMatchObject({ documentId: shared.documentId, library: 'shared' });
    }
    const sharedList = await expectStatus<{ documents: DocumentView[] }>(
      await call('user_002', 'documents?library=shared'),
      200,
    );
    expect(sharedList.documents).toEqual([
      expect.objectContaining({ documentId: shared.documentId, ownedByYou: false }),
    ]);
    expect((await call('user_001', `documents/${shared.documentId}`, { method: 'DELETE' })).status).toBe(403);
    expect((await call('user_003', `documents/${shared.documentId}`, { method: 'DELETE' })).status).toBe(204);
    expect(await search('user_002', 'vegetarian lasagne thursday')).toEqual([]);
  });

  it('removes a deleted document from search at once, with every chunk', async () => {
    expect((await call('user_001', `documents/${handbook.documentId}`, { method: 'DELETE' })).status).toBe(
      204,
    );
    const hits = await search('user_001', 'parental leave sixteen weeks');
    expect(hits.map((hit) => hit.documentId)).not.toContain(handbook.documentId);
    expect((await call('user_001', `documents/${handbook.documentId}`)).status).toBe(404);
    expect(await storedChunks(handbook.documentId)).toBe(0);
  });

  it('refuses uploads that are too large, of an unsupported type or empty, with problem+json', async () => {
    const cases: [Response, number, string][] = [
      [await uploadMarkdown('user_001', 'x'.repeat(MAX_DOCUMENT_BYTES + 1)), 413, 'document_too_large'],
      [
        await uploadForm('user_001', new Uint8Array([0x89, 0x50, 0x4e, 0x47]), 'photo.png', 'image/png'),
        415,
        'unsupported_document_type',
      ],
      [
        await uploadForm('user_001', new Uint8Array(0), 'empty.md', 'text/markdown'),
        400,
        'validation_failed',
      ],
      [await uploadJson('user_001', { fileName: 'empty.txt', contentBase64: '' }), 400, 'validation_failed'],
    ];
    for (const [response, status, code] of cases) {
      expect(response.status).toBe(status);
      expect(response.headers.get('content-type')).toBe('application/problem+json');
      expect(await response.json()).toMatchObject({ status, code });
    }
  });

  it('fails a corrupt PDF with the reason, and nothing of it is searchable', async () => {
    const corrupt = await accepted(
      await uploadForm(
        'user_001',
        new TextEncoder().encode('%PDF-1.4 garbage that claims to be a PDF'),
        'broken.pdf',
        'application/pdf',
      ),
    );
    const failed = await settled('user_001', corrupt.documentId);
    expect(failed).toMatchObject({ status: 'failed', failure: { code: 'unreadable' } });
    expect(failed.failure?.reason).toMatch(/PDF/);
    expect(await storedChunks(corrupt.documentId)).toBe(0);
    const hits = await search('user_001', 'garbage claims PDF');
    expect(hits.map((hit) => hit.documentId)).not.toContain(corrupt.documentId);
  });
});
