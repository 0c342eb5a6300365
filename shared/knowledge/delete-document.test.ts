// Deleting over in-memory stores: the uploader's document goes with its chunks and bytes, others' are refused
// with nothing changed, and a delete that stopped half-way is finished by the next.
import { beforeEach, describe, expect, it } from 'vitest';
import { ForbiddenError, NotFoundError } from '../errors.js';
import {
  KeywordEmbeddings,
  knowledgeChunk,
  knowledgeDocument,
  memoryKnowledgeStores,
} from '../../test/support/in-memory-knowledge.js';
import { RecordingPublisher } from '../../test/support/in-memory-ports.js';
import { privateLibrary, SHARED_LIBRARY } from './contracts.js';
import { deleteDocument } from './delete-document.js';
import { searchKnowledge } from './search-knowledge.js';
import { uploadDocument } from './upload-document.js';
import { EVERY_HIT } from '../../test/support/search-relevance.js';

const id = (n: number) => n.toString(16).padStart(32, '0');
const ALICE = privateLibrary('user_001');
const model = new KeywordEmbeddings(['leave', 'travel']);

let stores: ReturnType<typeof memoryKnowledgeStores>;
beforeEach(async () => {
  stores = memoryKnowledgeStores();
  const own = knowledgeDocument(ALICE, id(1), { parts: 2 });
  const shared = knowledgeDocument(SHARED_LIBRARY, id(2), { ownerId: 'user_003' });
  for (const document of [own, shared]) {
    await stores.documents.create(document);
    const texts = ['Annual leave is 25 days.', 'Travel is booked by train.', 'Leave carries over.'];
    await stores.chunks.put(texts.map((text, i) => knowledgeChunk(document, i, text, model.vector(text))));
  }
  await stores.uploads.put(id(1), 1, new Uint8Array(2 * 1024 * 1024));
});

const search = (userId: string) =>
  searchKnowledge({ chunks: stores.chunks, llm: model, relevance: EVERY_HIT }, userId, 'leave', 10);

describe('deleteDocument', () => {
  it("removes the uploader's document, every chunk and its bytes, and search no longer finds it", async () => {
    expect((await search('user_001')).filter((hit) => hit.documentId === id(1))).not.toHaveLength(0);
    const outcome = await deleteDocument(stores, 'user_001', id(1));
    expect(outcome).toEqual({ library: ALICE, chunksRemoved: 3 });
    expect(stores.documents.document(ALICE, id(1))).toBeUndefined();
    expect(stores.chunks.of(ALICE, id(1))).toEqual([]);
    expect(stores.uploads.parts.size).toBe(0);
    expect((await search('user_001')).map((hit) => hit.documentId)).not.toContain(id(1));
  });

  it("lets a librarian delete their shared document, and nobody else's", async () => {
    await expect(deleteDocument(stores, 'user_001', id(2))).rejects.toThrow(ForbiddenError);
    expect(stores.documents.document(SHARED_LIBRARY, id(2))?.status).toBe('ready');
    await deleteDocument(stores, 'user_003', id(2));
    expect(stores.documents.document(SHARED_LIBRARY, id(2))).toBeUndefined();
  });

  it("answers 404 for another user's private document and an unknown one, changing nothing", async () => {
    await expect(deleteDocument(stores, 'user_002', id(1))).rejects.toThrow(NotFoundError);
    await expect(deleteDocument(stores, 'user_001', id(9))).rejects.toThrow(NotFoundError);
    expect(stores.documents.document(ALICE, id(1))?.status).toBe('ready');
    expect(stores.chunks.of(ALICE, id(1))).toHaveLength(3);
  });

  it('hides the document from search as soon as it is marked, and the next delete finishes a stopped one', async () => {
    const crashing = {
      ...stores,
      chunks: {
        put: stores.chunks.put.bind(stores.chunks),
        search: stores.chunks.search.bind(stores.chunks),
        remove: () => Promise.reject(new Error('the store went away')),
      },
    };
    await expect(deleteDocument(crashing, 'user_001', id(1))).rejects.toThrow('the store went away');
    expect(stores.documents.document(ALICE, id(1))?.status).toBe('deleting');
    expect((await search('user_001')).map((hit) => hit.documentId)).not.toContain(id(1));
    expect(await deleteDocument(stores, 'user_001', id(1))).toEqual({ library: ALICE, chunksRemoved: 3 });
    expect(stores.documents.document(ALICE, id(1))).toBeUndefined();
  });
});

describe('deleteDocument and an upload of the same content at once', () => {
  it('leaves the record the upload stored anew after finishing the delete itself', async () => {
    const upload = {
      documents: stores.documents,
      chunks: stores.chunks,
      uploads: stores.uploads,
      publisher: new RecordingPublisher(),
      settings: { maxDocumentBytes: 1_000, sharedLibrary: { users: [], groups: [] } },
    };
    const content = new TextEncoder().encode('# Leave\n\nAnnual leave is 25 days.\n');
    const { document } = await uploadDocument(
      upload,
      { userId: 'user_001' },
      { fileName: 'leave.md', content },
    );
    let uploaded = false;
    const slow = {
      ...stores,
      chunks: {
        put: stores.chunks.put.bind(stores.chunks),
        search: stores.chunks.search.bind(stores.chunks),
        // While this delete removes the chunks, the owner uploads the same content again.
        remove: async (library: string, documentId: string, fromIndex?: number) => {
          if (!uploaded) {
            uploaded = true;
            const again = await uploadDocument(
              upload,
              { userId: 'user_001' },
              { fileName: 'leave.md', content },
            );
            expect(again.status).toBe(202);
          }
          return stores.chunks.remove(library, documentId, fromIndex);
        },
      },
    };
    await deleteDocument(slow, 'user_001', document.documentId);
    expect(stores.documents.document(ALICE, document.documentId)).toMatchObject({
      status: 'queued',
      attempt: 2,
    });
    expect(await stores.uploads.get(document.documentId, 2, 1)).toEqual(content);
  });
});
