// Uploading over in-memory stores: a new document stored and queued, the same content answered from its
// record, a librarian's upload shared, and what can be refused without reading the content refused.
import { createHash } from 'node:crypto';
import { beforeEach, describe, expect, it } from 'vitest';
import { AppError } from '../errors.js';
import { parseInput } from '../validation.js';
import { RecordingPublisher } from '../../test/support/in-memory-ports.js';
import { knowledgeChunk, memoryKnowledgeStores } from '../../test/support/in-memory-knowledge.js';
import {
  ingestMessageId,
  KNOWLEDGE_INGEST_QUEUE,
  privateLibrary,
  SHARED_LIBRARY,
  type DocumentUpload,
} from './contracts.js';
import {
  documentIdFor,
  documentUploadBodySchema,
  formatOf,
  UNTITLED_DOCUMENT,
  uploadBodyLimit,
  uploadDocument,
  type UploadServices,
} from './upload-document.js';

const NOW = new Date('2026-03-02T09:00:00.000Z');
const MARKDOWN = '# Travel policy\n\nBook trains for trips under four hours.\n';
const bytes = (text: string) => new TextEncoder().encode(text);
const alice = { userId: 'user_001' };
const carol = { userId: 'user_003' };

let stores: ReturnType<typeof memoryKnowledgeStores>;
let publisher: RecordingPublisher;
let services: UploadServices;
beforeEach(() => {
  stores = memoryKnowledgeStores({ partBytes: 16 });
  publisher = new RecordingPublisher();
  services = {
    documents: stores.documents,
    chunks: stores.chunks,
    uploads: stores.uploads,
    publisher,
    settings: { maxDocumentBytes: 1_000, sharedLibrary: { users: ['user_003'], groups: ['librarians'] } },
    now: () => NOW,
  };
});

const markdown = (extra: Partial<DocumentUpload> = {}): DocumentUpload => ({
  fileName: 'travel-policy.md',
  content: bytes(MARKDOWN),
  ...extra,
});

async function refusal(upload: DocumentUpload): Promise<AppError> {
  const error = await uploadDocument(services, alice, upload).catch((caught: unknown) => caught);
  expect(error).toBeInstanceOf(AppError);
  expect(stores.documents.records.size).toBe(0);
  expect(stores.uploads.parts.size).toBe(0);
  expect(publisher.published).toEqual([]);
  return error as AppError;
}

describe('uploadDocument: a new document', () => {
  it("stores the record, keeps the bytes in parts and queues the document, in the caller's library", async () => {
    const result = await uploadDocument(services, alice, markdown());
    const library = privateLibrary('user_001');
    const contentHash = createHash('sha256').update(MARKDOWN).digest('hex');
    const documentId = createHash('sha256').update(`${library}\n${contentHash}`).digest('hex').slice(0, 32);
    expect(result).toEqual({
      status: 202,
      document: {
        documentId,
        title: 'travel-policy',
        fileName: 'travel-policy.md',
        format: 'markdown',
        bytes: MARKDOWN.length,
        status: 'queued',
        library: 'private',
        ownedByYou: true,
        createdAt: NOW.toISOString(),
        updatedAt: NOW.toISOString(),
      },
    });
    expect(stores.documents.document(library, documentId)).toMatchObject({
      ownerId: 'user_001',
      titleGiven: true,
      mediaType: 'text/markdown',
      contentHash,
      parts: Math.ceil(MARKDOWN.length / 16),
      attempt: 1,
    });
    expect(await stores.uploads.get(documentId, 1, Math.ceil(MARKDOWN.length / 16))).toEqual(bytes(MARKDOWN));
    const message = { library, documentId, attempt: 1 };
    expect(publisher.published).toEqual([
      {
        entity: KNOWLEDGE_INGEST_QUEUE,
        message: { body: message, messageId: `${documentId}.1.${Date.parse(NOW.toISOString())}` },
      },
    ]);
    expect(documentIdFor(library, contentHash)).toBe(documentId);
  });

  it("puts a librarian's upload in the shared library: named by user id or by group", async () => {
    const byUser = await uploadDocument(services, carol, markdown());
    expect(byUser.document).toMatchObject({ library: 'shared', ownedByYou: true });
    expect(stores.documents.document(SHARED_LIBRARY, byUser.document.documentId)?.ownerId).toBe('user_003');
    const byGroup = await uploadDocument(
      services,
      { userId: 'user_002', groups: ['staff', 'librarians'] },
      markdown({ content: bytes('# Other\n\nText.') }),
    );
    expect(byGroup.document.library).toBe('shared');
    // The same content in another library is another document.
    const own = await uploadDocument(services, alice, markdown());
    expect(own.document.documentId).not.toBe(byUser.document.documentId);
  });

  it('takes the title given, else the file name without its extension, else a placeholder the worker replaces', async () => {
    const titled = await uploadDocument(services, alice, markdown({ title: 'Travel Policy 2026' }));
    expect(titled.document.title).toBe('Travel Policy 2026');
    const untitled = await uploadDocument(services, alice, {
      contentType: 'text/plain',
      content: bytes('Just some notes.'),
    });
    expect(untitled.document.title).toBe(UNTITLED_DOCUMENT);
    expect(
      stores.documents.document(privateLibrary('user_001'), untitled.document.documentId)?.titleGiven,
    ).toBe(false);
  });
});

describe('uploadDocument: the same content again', () => {
  it('queues a queued document again, under the same message id, and stores nothing new', async () => {
    const first = await uploadDocument(services, alice, markdown());
    const again = await uploadDocument(services, alice, markdown({ title: 'Another title' }));
    expect(again).toEqual(first);
    expect(stores.documents.records.size).toBe(1);
    expect(publisher.published).toHaveLength(2);
    expect(publisher.published[1]).toEqual(publisher.published[0]);
  });

  it('queues the same content uploaded again after a delete under a new message id (not a duplicate)', async () => {
    const first = await uploadDocument(services, alice, markdown());
    await stores.documents.delete(privateLibrary('user_001'), first.document.documentId);
    const later = new Date(NOW.getTime() + 60_000);
    const again = await uploadDocument({ ...services, now: () => later }, alice, markdown());
    expect(again.document.documentId).toBe(first.document.documentId);
    const ids = publisher.published.map((sent) => sent.message.messageId);
    expect(ids).toHaveLength(2);
    expect(new Set(ids).size).toBe(2);
    expect(ids[1]).toBe(
      ingestMessageId({ documentId: first.document.documentId, attempt: 1, createdAt: later.toISOString() }),
    );
  });

  it('answers a ready document with 200 and queues nothing', async () => {
    const first = await uploadDocument(services, alice, markdown());
    const library = privateLibrary('user_001');
    const stored = await stores.documents.get(library, first.document.documentId);
    await stores.documents.replace(
      { ...stored!.document, status: 'ready', chunkCount: 3, pageCount: 1 },
      stored!.version,
    );
    const again = await uploadDocument(services, alice, markdown());
    expect(again.status).toBe(200);
    expect(again.document).toMatchObject({ status: 'ready', chunkCount: 3 });
    expect(publisher.published).toHaveLength(1);
  });

  it('starts a new attempt of a failed document: the bytes again, the failure cleared, the next message id', async () => {
    const first = await uploadDocument(services, alice, markdown());
    const library = privateLibrary('user_001');
    const { documentId } = first.document;
    const stored = await stores.documents.get(library, documentId);
    await stores.documents.replace(
      {
        ...stored!.document,
        status: 'failed',
        failure: { code: 'embedding_failed', reason: 'The model was unavailable.' },
      },
      stored!.version,
    );
    await stores.uploads.remove(documentId, 1, stored!.document.parts);
    const again = await uploadDocument(services, alice, markdown({ title: 'Travel Policy' }));
    expect(again.status).toBe(202);
    expect(again.document).toMatchObject({ status: 'queued', title: 'Travel Policy' });
    expect(again.document).not.toHaveProperty('failure');
    expect(stores.documents.document(library, documentId)).toMatchObject({ attempt: 2, status: 'queued' });
    // Kept under the new attempt: a late run of the failed one removes only its own.
    expect(await stores.uploads.get(documentId, 2, stored!.document.parts)).toEqual(bytes(MARKDOWN));
    expect(publisher.published.at(-1)?.message).toEqual({
      body: { library, documentId, attempt: 2 },
      messageId: `${documentId}.2.${Date.parse(NOW.toISOString())}`,
    });
  });

  it('finishes the delete of a document being deleted, then stores it anew at the next attempt', async () => {
    const first = await uploadDocument(services, alice, markdown());
    const library = privateLibrary('user_001');
    const { documentId } = first.document;
    const stored = await stores.documents.get(library, documentId);
    // A delete that marked the document and stopped (or is still running): its chunks and bytes are still there.
    await stores.documents.replace({ ...stored!.document, status: 'deleting' }, stored!.version);
    await stores.chunks.put([
      knowledgeChunk(stored!.document, 0, 'Book trains for trips under four hours.', [1, 0]),
    ]);
    const again = await uploadDocument(services, alice, markdown({ title: 'Travel Policy' }));
    expect(again).toMatchObject({ status: 202, document: { status: 'queued', title: 'Travel Policy' } });
    expect(stores.documents.document(library, documentId)).toMatchObject({ status: 'queued', attempt: 2 });
    expect(stores.chunks.of(library, documentId)).toEqual([]);
    // The deleted attempt's bytes are gone; the new attempt's are stored.
    expect(await stores.uploads.get(documentId, 1, stored!.document.parts)).toBeUndefined();
    expect(await stores.uploads.get(documentId, 2, stored!.document.parts)).toEqual(bytes(MARKDOWN));
    // Its own message id: not dropped as a duplicate of the deleted document's.
    expect(publisher.published.at(-1)?.message).toEqual({
      body: { library, documentId, attempt: 2 },
      messageId: `${documentId}.2.${Date.parse(NOW.toISOString())}`,
    });
  });

  it('answers from the record another upload created meanwhile', async () => {
    const racing: UploadServices = {
      ...services,
      documents: {
        ...services.documents,
        get: (library, documentId) => stores.documents.get(library, documentId),
        list: (library, options) => stores.documents.list(library, options),
        replace: (document, version) => stores.documents.replace(document, version),
        delete: (library, documentId) => stores.documents.delete(library, documentId),
        // The other upload wins the create, and its document is ready by the time this one reads it.
        create: async (document) => {
          await stores.documents.create({ ...document, status: 'ready', chunkCount: 1 });
          return 'exists';
        },
      },
    };
    const result = await uploadDocument(racing, alice, markdown());
    expect(result.status).toBe(200);
    expect(publisher.published).toEqual([]);
  });
});

describe('uploadDocument: what is refused before anything is stored', () => {
  it('refuses an empty or blank document (400) and one over the limit (413)', async () => {
    expect(await refusal(markdown({ content: new Uint8Array(0) }))).toMatchObject({ status: 400 });
    expect(await refusal(markdown({ content: bytes(' \n\t\n') }))).toMatchObject({ status: 400 });
    expect(await refusal(markdown({ content: new Uint8Array(1_001).fill(65) }))).toMatchObject({
      status: 413,
      code: 'document_too_large',
    });
  });

  it('refuses a type it does not read (415, naming the supported types)', async () => {
    const error = await refusal({ fileName: 'photo.png', contentType: 'image/png', content: bytes('x') });
    expect(error).toMatchObject({ status: 415, code: 'unsupported_document_type' });
    expect(error.message).toMatch(/Markdown.*plain text.*HTML.*PDF/);
    expect(await refusal({ fileName: 'report.docx', content: bytes('x') })).toMatchObject({ status: 415 });
    expect(await refusal({ content: bytes('no name, no type') })).toMatchObject({ status: 415 });
  });

  it('refuses a "PDF" that does not start as one (415) and text that is not UTF-8 (400)', async () => {
    const notPdf = await refusal({ fileName: 'report.pdf', content: bytes('just text, really') });
    expect(notPdf).toMatchObject({ status: 415 });
    expect(notPdf.message).toMatch(/%PDF-/);
    const latin1 = await refusal({
      fileName: 'notes.txt',
      content: Uint8Array.from([0x63, 0x61, 0x66, 0xe9]),
    });
    expect(latin1).toMatchObject({ status: 400 });
    expect(latin1.message).toMatch(/UTF-8/);
  });
});

describe('formatOf', () => {
  it('reads the content type without its parameters, then the extension', () => {
    expect(formatOf('text/markdown; charset=utf-8', undefined)).toBe('markdown');
    expect(formatOf('TEXT/HTML', 'x.txt')).toBe('html');
    expect(formatOf('application/pdf', undefined)).toBe('pdf');
    expect(formatOf(undefined, 'Guide.PDF')).toBe('pdf');
    expect(formatOf('application/octet-stream', 'page.htm')).toBe('html');
    expect(formatOf('', 'notes.text')).toBe('text');
  });

  it('takes a .md file sent as text/plain for Markdown', () => {
    expect(formatOf('text/plain', 'README.md')).toBe('markdown');
    expect(formatOf('text/plain', 'notes.txt')).toBe('text');
  });
});

describe('documentUploadBodySchema', () => {
  it("decodes a JSON body's base64 content (with line breaks) and keeps a form's bytes", () => {
    const encoded = Buffer.from(MARKDOWN)
      .toString('base64')
      .replace(/(.{20})/g, '$1\n');
    expect(
      parseInput(
        documentUploadBodySchema,
        { title: ' Policy ', contentType: 'text/markdown', contentBase64: encoded },
        'document',
      ),
    ).toEqual({ title: 'Policy', contentType: 'text/markdown', content: new Uint8Array(bytes(MARKDOWN)) });
    expect(
      parseInput(documentUploadBodySchema, { fileName: 'a.md', content: bytes('# A') }, 'document'),
    ).toEqual({ fileName: 'a.md', content: bytes('# A') });
  });

  it('names a missing, empty or malformed content (400)', () => {
    expect(() => parseInput(documentUploadBodySchema, { title: 'x' }, 'document')).toThrow(
      /contentBase64 is missing/,
    );
    expect(() => parseInput(documentUploadBodySchema, { contentBase64: '' }, 'document')).toThrow(
      /contentBase64 is empty/,
    );
    expect(() => parseInput(documentUploadBodySchema, { contentBase64: 'not base64!' }, 'document')).toThrow(
      /contentBase64 is not valid base64/,
    );
  });

  it('leaves room for base64 and the other fields in the body limit', () => {
    expect(uploadBodyLimit(3_000)).toBe(4_000 + 64 * 1024);
  });
});
