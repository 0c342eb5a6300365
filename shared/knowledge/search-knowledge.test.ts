// Knowledge search over in-memory stores: one embeddings request, the caller's own and the shared library only,
// ready documents only, and each hit with its title, headings, pages, library and citation.
import { beforeEach, describe, expect, it } from 'vitest';
import {
  KeywordEmbeddings,
  knowledgeChunk,
  knowledgeDocument,
  memoryKnowledgeStores,
} from '../../test/support/in-memory-knowledge.js';
import { privateLibrary, SHARED_LIBRARY } from './contracts.js';
import { searchKnowledge } from './search-knowledge.js';
import { EVERY_HIT } from '../../test/support/search-relevance.js';

const id = (n: number) => n.toString(16).padStart(32, '0');
let model: KeywordEmbeddings;
let stores: ReturnType<typeof memoryKnowledgeStores>;

beforeEach(async () => {
  model = new KeywordEmbeddings(['parental', 'leave', 'expenses']);
  stores = memoryKnowledgeStores();
  const add = async (
    library: string,
    n: number,
    title: string,
    status: 'ready' | 'processing',
    chunks: { text: string; headings?: string[]; pages?: number[] }[],
  ) => {
    const document = knowledgeDocument(library, id(n), { title, status });
    await stores.documents.create(document);
    await stores.chunks.put(
      chunks.map((chunk, i) =>
        knowledgeChunk(document, i, chunk.text, model.vector(chunk.text), {
          headings: chunk.headings ?? [],
          ...(chunk.pages ? { pages: chunk.pages } : {}),
        }),
      ),
    );
  };
  await add(privateLibrary('user_001'), 1, 'My notes', 'ready', [
    { text: 'Expenses are filed monthly.', headings: ['Money', 'Expenses'] },
  ]);
  await add(SHARED_LIBRARY, 2, 'Employee Handbook', 'ready', [
    { text: 'Parental leave lasts sixteen weeks, parental leave is paid.', pages: [4, 5] },
    { text: 'Expenses need receipts.', pages: [7] },
  ]);
  await add(privateLibrary('user_002'), 3, "Bob's leave plan", 'ready', [
    { text: 'Parental leave parental leave parental leave.' },
  ]);
  await add(privateLibrary('user_001'), 4, 'Draft', 'processing', [{ text: 'Parental leave draft.' }]);
});

describe('searchKnowledge', () => {
  it("finds the best chunk of the caller's readable, ready documents, with its citation", async () => {
    const hits = await searchKnowledge(
      { chunks: stores.chunks, llm: model, relevance: EVERY_HIT },
      'user_001',
      'parental leave',
      5,
    );
    expect(model.requests).toEqual([['parental leave']]);
    expect(stores.chunks.queries[0]?.libraries).toEqual([privateLibrary('user_001'), SHARED_LIBRARY]);
    expect(hits[0]).toMatchObject({
      chunkId: `${id(2)}.0`,
      documentId: id(2),
      title: 'Employee Handbook',
      headings: [],
      pages: [4, 5],
      library: 'shared',
      citation: 'Employee Handbook, pp. 4–5',
      text: 'Parental leave lasts sixteen weeks, parental leave is paid.',
    });
    expect(hits[0]?.score).toBeGreaterThan(0);
    expect(hits[0]?.similarity).toBeGreaterThan(0.9);
    // Bob's private document and a document still being processed are never among them.
    expect(hits.map((hit) => hit.documentId)).not.toContain(id(3));
    expect(hits.map((hit) => hit.documentId)).not.toContain(id(4));
  });

  it('names the innermost heading of a chunk without pages, and keeps to the limit', async () => {
    const hits = await searchKnowledge(
      { chunks: stores.chunks, llm: model, relevance: EVERY_HIT },
      'user_001',
      'expenses',
      1,
    );
    expect(hits).toHaveLength(1);
    const all = await searchKnowledge(
      { chunks: stores.chunks, llm: model, relevance: EVERY_HIT },
      'user_001',
      'expenses',
      5,
    );
    expect(all.find((hit) => hit.documentId === id(1))).toMatchObject({
      heading: 'Expenses',
      headings: ['Money', 'Expenses'],
      library: 'private',
      citation: 'My notes › Expenses',
    });
  });

  it('returns only the chunks that hold a word of the query or are similar enough, and nothing otherwise', async () => {
    const relevance = { minSimilarity: 0.3, textMatchAdmits: true };
    const services = { chunks: stores.chunks, llm: model, relevance };
    // Only the handbook's first chunk says "parental"; the other readable chunks are about expenses.
    const parental = await searchKnowledge(services, 'user_001', 'parental', 5);
    expect(parental.map((hit) => hit.chunkId)).toEqual([`${id(2)}.0`]);
    // A word no chunk holds, far from every chunk by vector: nothing, not the least bad five.
    expect(await searchKnowledge(services, 'user_001', 'encryption', 5)).toEqual([]);
  });
});
