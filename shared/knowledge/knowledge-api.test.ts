// Reading documents over in-memory stores: a page of the caller's private library (the default) or of the shared
// one, newest first and a page at a time; one document from the caller's own library or the shared one, and 404
// for another user's private document, an unknown one and one being deleted.
import { beforeEach, describe, expect, it } from 'vitest';
import { NotFoundError, ValidationError } from '../errors.js';
import { knowledgeDocument, memoryKnowledgeStores } from '../../test/support/in-memory-knowledge.js';
import { privateLibrary, SHARED_LIBRARY } from './contracts.js';
import { getDocument, listDocuments } from './knowledge-api.js';

const id = (n: number) => n.toString(16).padStart(32, '0');
const ALICE = privateLibrary('user_001');
const BOB = privateLibrary('user_002');

let stores: ReturnType<typeof memoryKnowledgeStores>;
beforeEach(async () => {
  stores = memoryKnowledgeStores();
  const documents = [
    knowledgeDocument(ALICE, id(1), { title: 'Older', createdAt: '2026-03-01T09:00:00.000Z' }),
    knowledgeDocument(ALICE, id(2), {
      title: 'Newer',
      status: 'failed',
      failure: { code: 'empty', reason: 'The document has no text.' },
      createdAt: '2026-03-02T09:00:00.000Z',
    }),
    knowledgeDocument(ALICE, id(3), { title: 'Going', status: 'deleting' }),
    knowledgeDocument(BOB, id(4), { title: "Bob's" }),
    knowledgeDocument(SHARED_LIBRARY, id(5), { title: 'Handbook', ownerId: 'user_003', pageCount: 3 }),
  ];
  for (const document of documents) await stores.documents.create(document);
});

describe('listDocuments', () => {
  it("lists the caller's own library by default, newest first, without documents being deleted", async () => {
    const page = await listDocuments(stores.documents, 'user_001', { library: 'private', limit: 50 });
    expect(page.documents.map((d) => [d.title, d.status, d.library, d.ownedByYou])).toEqual([
      ['Newer', 'failed', 'private', true],
      ['Older', 'ready', 'private', true],
    ]);
    expect(page.documents[0]?.failure).toEqual({ code: 'empty', reason: 'The document has no text.' });
    expect(page).not.toHaveProperty('continuationToken');
  });

  it('lists the whole shared library for anyone, saying whose it is', async () => {
    const page = await listDocuments(stores.documents, 'user_002', { library: 'shared', limit: 50 });
    expect(page.documents).toEqual([
      expect.objectContaining({ title: 'Handbook', library: 'shared', ownedByYou: false, pageCount: 3 }),
    ]);
    const own = await listDocuments(stores.documents, 'user_003', { library: 'shared', limit: 50 });
    expect(own.documents[0]?.ownedByYou).toBe(true);
  });

  it('pages with a token bound to its library', async () => {
    const first = await listDocuments(stores.documents, 'user_001', { library: 'private', limit: 1 });
    expect(first.documents.map((d) => d.title)).toEqual(['Newer']);
    const second = await listDocuments(stores.documents, 'user_001', {
      library: 'private',
      limit: 1,
      continuationToken: first.continuationToken,
    });
    expect(second.documents.map((d) => d.title)).toEqual(['Older']);
    await expect(
      listDocuments(stores.documents, 'user_002', {
        library: 'private',
        limit: 1,
        continuationToken: first.continuationToken,
      }),
    ).rejects.toThrow(ValidationError);
  });
});

describe('getDocument', () => {
  it("finds the caller's own document, then the shared library's", async () => {
    expect(await getDocument(stores.documents, 'user_001', id(1))).toMatchObject({
      title: 'Older',
      library: 'private',
    });
    expect(await getDocument(stores.documents, 'user_001', id(5))).toMatchObject({
      title: 'Handbook',
      library: 'shared',
      ownedByYou: false,
    });
  });

  it("answers 404 for another user's private document, an unknown one and one being deleted", async () => {
    for (const documentId of [id(4), id(99), id(3)])
      await expect(getDocument(stores.documents, 'user_001', documentId)).rejects.toThrow(NotFoundError);
  });
});
