// Knowledge search measured on a small labelled set (test/support/labelled-queries.ts: the test handbook and two
// PDFs), through the product's extraction, chunking, embedding input and search use-case, with the offline model's
// embeddings and its default relevance rule: answers found in the first three, and nothing for what nothing answers.
import { describe, expect, it } from 'vitest';
import { productVocabulary } from '../offline-model-vocabulary.js';
import { hashedEmbedding } from './hashed-embedding.js';
import {
  knowledgeChunk,
  knowledgeDocument,
  memoryKnowledgeStores,
} from '../../test/support/in-memory-knowledge.js';
import {
  LABELLED_CHUNK_TOKENS,
  LABELLED_DOCUMENTS,
  scoreLabelledSet,
} from '../../test/support/labelled-queries.js';
import { EVERY_HIT, OFFLINE_RELEVANCE } from '../../test/support/search-relevance.js';
import type { Relevance } from '../../shared/search/relevance.js';
import { chunkDocument, embeddingInput } from '../../shared/knowledge/chunking.js';
import { privateLibrary } from '../../shared/knowledge/contracts.js';
import { extractDocument } from '../../shared/knowledge/extract-document.js';
import { searchKnowledge } from '../../shared/knowledge/search-knowledge.js';
import { readingBudget } from '../../shared/knowledge/settings.js';

/** The local runtime's LLM_EMBEDDING_DIMENSIONS default. */
const DIMENSIONS = 1536;
const USER = 'labelled-user';

/** Floors measured on this set (recall@3 1.00, empty answers 1.00): a change that lowers them is a regression. */
const RECALL_AT_3_FLOOR = 1;
const EMPTY_RATE_FLOOR = 1;

async function indexedStores() {
  const stores = memoryKnowledgeStores();
  for (const [n, source] of LABELLED_DOCUMENTS.entries()) {
    const documentId = String(n).padStart(32, '0');
    const document = knowledgeDocument(privateLibrary(USER), documentId, {
      title: source.title,
      format: source.format,
    });
    await stores.documents.create(document);
    const extracted = await extractDocument(source.format, source.content, readingBudget().limits);
    const drafts = chunkDocument(extracted, { targetTokens: LABELLED_CHUNK_TOKENS, overlapTokens: 0 });
    await stores.chunks.put(
      drafts.map((draft, index) =>
        knowledgeChunk(
          document,
          index,
          draft.text,
          hashedEmbedding(embeddingInput(source.title, draft), DIMENSIONS, productVocabulary.text),
          { headings: draft.headings, ...(draft.pages === undefined ? {} : { pages: draft.pages }) },
        ),
      ),
    );
  }
  return stores;
}

const searchWith = (stores: Awaited<ReturnType<typeof indexedStores>>, relevance: Relevance) => {
  const services = {
    chunks: stores.chunks,
    llm: {
      embed: (texts: string[]) =>
        Promise.resolve(texts.map((text) => hashedEmbedding(text, DIMENSIONS, productVocabulary.text))),
    },
    relevance,
  };
  return async (query: string) => (await searchKnowledge(services, USER, query, 5)).map((hit) => hit.text);
};

describe('knowledge search on the labelled set', () => {
  it('finds each answer in the first three and returns nothing for queries nothing answers', async () => {
    const stores = await indexedStores();
    const figures = await scoreLabelledSet(searchWith(stores, OFFLINE_RELEVANCE));
    expect(figures.missed).toEqual([]);
    expect(figures.answeredAnyway).toEqual([]);
    expect(figures.recallAt3).toBeGreaterThanOrEqual(RECALL_AT_3_FLOOR);
    expect(figures.emptyRate).toBeGreaterThanOrEqual(EMPTY_RATE_FLOOR);

    // Ranking without the rule answers every query that matches nothing: the rule is what makes them empty.
    const unfiltered = await scoreLabelledSet(searchWith(stores, EVERY_HIT));
    expect(unfiltered.emptyRate).toBe(0);
  }, 60_000);
});
