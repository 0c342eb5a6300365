// The Cosmos DB adapter of KnowledgeChunks: chunks written by upsert, removed by document, and searched by
// hybrid ranking over the ready documents of the caller's libraries, in Cosmos DB or in process.
import type { Container } from '@azure/cosmos';
import { z } from 'zod';
import { mapBounded } from '../../bounded-parallel.js';
import { scoreAtPosition } from '../../cosmos/adapters/hybrid-search-query.js';
import {
  cosmosFailure,
  deleteQueriedItems,
  parseStored,
  queryItems,
  queryPages,
} from '../../cosmos/adapters/cosmos-items.js';
import type { FullTextMode } from '../../search/full-text.js';
import { admitted } from '../../search/relevance.js';
import {
  rankQuery,
  searchTerms,
  termCounts,
  vectorNorm,
  type RankCandidate,
  type TermCounts,
} from '../../search/hybrid-ranking.js';
import { knowledgeChunkSchema, type ChunkView, type DocumentStatus } from '../contracts.js';
import { chunkSearchQuery, VIEW_PROJECTION } from './knowledge-chunk-query.js';
import {
  chunkMatchText,
  type ChunkMatch,
  type ChunkQuery,
  type KnowledgeChunks,
} from '../knowledge-chunks.js';

const chunkViewSchema = knowledgeChunkSchema.omit({ embedding: true }) satisfies z.ZodType<ChunkView>;

/**
 * The statuses whose documents may have chunks that search must not see: being ingested (chunks of an earlier
 * attempt, or written before the record turns ready), being deleted, or failed (the worker removes a failed
 * document's chunks right after it marks it failed, and again on any later delivery, but a crash in between leaves
 * them until then). Every status but `ready`: the failed documents a library keeps until their owners act are the
 * list's only unbounded part, and each is one short id.
 */
const HIDDEN_STATUSES: readonly DocumentStatus[] = ['queued', 'processing', 'deleting', 'failed'];

/** Chunk writes in flight at once: quick for a long document, no burst that throttles the account. */
const PARALLEL_WRITES = 8;

export interface ChunkStoreOptions {
  /** Where search is ranked: Cosmos DB's own functions (Azure), or in process (the local server). */
  ranking: FullTextMode;
  /** Chunks whose vector and terms this process keeps for in-process ranking (default 20,000). */
  cachedChunks?: number;
}

/**
 * `chunks` is the KNOWLEDGE_CHUNKS_CONTAINER container, `documents` the KNOWLEDGE_DOCUMENTS_CONTAINER one, read
 * for which documents are ready.
 */
export function createCosmosKnowledgeChunks(
  chunks: Container,
  documents: Container,
  options: ChunkStoreOptions,
): KnowledgeChunks {
  const cache = new DocumentChunkCache(options.cachedChunks ?? DEFAULT_CACHED_CHUNKS);

  async function searchInProcess(query: ChunkQuery): Promise<ChunkMatch[]> {
    // The ready documents of each library with their versions, read every time: a document that is no longer
    // ready is no longer ranked, at once, without a query more. Only a document this process has not read at that
    // version has its chunks read (one single-partition query); the rest come from the cache.
    const named = query.documentIds === undefined ? undefined : new Set(query.documentIds);
    const ready = (await Promise.all(query.libraries.map((library) => readyDocuments(documents, library))))
      .flat()
      .filter((document) => named === undefined || named.has(document.documentId));
    const held = new Map<string, DocumentChunks>();
    const missing: ReadyDocument[] = [];
    for (const document of ready) {
      const cached = cache.get(document);
      if (cached === undefined) missing.push(document);
      else held.set(documentKey(document.library, document.documentId), cached);
    }
    // What this search uses stays cached while it reads the rest: beyond the capacity, the documents that do not
    // fit are read again by each search, the others never.
    const inUse = new Set(held.keys());
    const read = await mapBounded(missing, PARALLEL_DOCUMENT_READS, async (document) => {
      const entry: DocumentChunks = {
        etag: document.etag,
        candidates: (await readDocumentChunks(chunks, document)).map(toCandidate),
      };
      const key = documentKey(document.library, document.documentId);
      if (cache.set(document, entry, inUse)) inUse.add(key);
      return [key, entry] as const;
    });
    for (const [key, entry] of read) held.set(key, entry);

    const candidates = new Map<string, Candidate>();
    for (const entry of held.values())
      for (const candidate of entry.candidates) candidates.set(candidate.id, candidate);
    return rankQuery([...candidates.values()], query).map(({ candidate, score, similarity }) => ({
      chunk: structuredClone(candidate.view),
      score,
      similarity,
    }));
  }

  async function searchInCosmos(query: ChunkQuery): Promise<ChunkMatch[]> {
    const hidden = (
      await Promise.all(query.libraries.map((library) => hiddenDocuments(documents, library)))
    ).flat();
    const spec = chunkSearchQuery(query, hidden);
    let resources: unknown[];
    try {
      // No partition key: one query across the libraries' partitions (see chunkSearchQuery).
      ({ resources } = await chunks.items.query(spec.query).fetchAll());
    } catch (error) {
      throw cosmosFailure('searching the knowledge base', error);
    }
    const rows = parseStored(z.array(searchRowSchema), resources, 'knowledge chunks');
    // Cosmos DB ranked the best candidatePool(limit); those that earn their place are kept here, as in process.
    const terms = searchTerms(query.text);
    return rows
      .map(({ similarity, ...chunk }, position) => ({
        chunk,
        score: scoreAtPosition(spec.components, position),
        similarity,
      }))
      .filter(({ chunk, similarity }) =>
        admitted(query.relevance, { similarity, text: termCounts(chunkMatchText(chunk)) }, terms),
      )
      .slice(0, query.limit);
  }

  return {
    async put(written) {
      await mapBounded(written, PARALLEL_WRITES, async (chunk) => {
        try {
          // Upsert by id: writing the same chunk again (a redelivered ingestion) replaces it with itself.
          await chunks.items.upsert({ ...chunk });
        } catch (error) {
          throw cosmosFailure('storing a knowledge chunk', error);
        }
      });
    },

    async remove(library, documentId, fromIndex = 0) {
      cache.delete(library, documentId);
      // The ids of the partition's chunks from `fromIndex` on, then a bounded number of deletes at a time.
      // Cosmos DB's delete by partition key (deleteAllItemsForPartitionKey) could drop a whole document in one
      // request, but it is a preview the account must opt into, runs in the background (the chunks are gone only
      // some time after it answers, while the port promises they are gone when remove resolves), cannot remove from
      // an index on (the leftovers of an earlier attempt) and says nothing of how many it removed: not used.
      return deleteQueriedItems(
        chunks,
        {
          query: 'SELECT VALUE c.id FROM c WHERE c.index >= @from',
          parameters: [{ name: '@from', value: Math.max(0, Math.floor(fromIndex)) }],
        },
        [library, documentId],
        "the knowledge document's chunks",
      );
    },

    search(query) {
      const libraries = [...new Set(query.libraries)];
      if (query.limit < 1 || libraries.length === 0) return Promise.resolve([]);
      const scoped = { ...query, libraries };
      return options.ranking === 'cosmos' ? searchInCosmos(scoped) : searchInProcess(scoped);
    },
  };
}

// --- Search in Cosmos DB -------------------------------------------------------------------------------------

const searchRowSchema = chunkViewSchema.extend({ similarity: z.number() });

/**
 * The ids of a library's documents whose chunks search must not see (HIDDEN_STATUSES): one single-partition query
 * on the documents container.
 */
function hiddenDocuments(documents: Container, library: string): Promise<string[]> {
  return queryItems(
    documents,
    {
      query: 'SELECT VALUE c.documentId FROM c WHERE ARRAY_CONTAINS(@statuses, c.status)',
      parameters: [{ name: '@statuses', value: [...HIDDEN_STATUSES] }],
    },
    library,
    'the knowledge documents',
    z.string(),
  );
}

// --- Search in process ----------------------------------------------------------------------------------------

interface ReadyDocument {
  library: string;
  documentId: string;
  etag: string;
}

const readyRowSchema = z.object({ documentId: z.string(), _etag: z.string() });

/**
 * Page size of the ready documents' query: -1 lets Cosmos DB fill each page up to its 4 MB cap (a row is ~80
 * bytes) instead of the SDK's default pages of 100.
 */
const READY_PAGE = -1;
/** Documents whose chunks are read at once when the cache lacks them. */
const PARALLEL_DOCUMENT_READS = 4;
/** About 120 MB of float32 vectors at 1,536 dimensions: the local runtime's whole knowledge base, typically. */
const DEFAULT_CACHED_CHUNKS = 20_000;

/** A library's ready documents and their record's version: one single-partition query. */
async function readyDocuments(documents: Container, library: string): Promise<ReadyDocument[]> {
  const ready: ReadyDocument[] = [];
  for await (const page of queryPages(
    documents,
    {
      query: 'SELECT c.documentId, c._etag FROM c WHERE c.status = @ready',
      parameters: [{ name: '@ready', value: 'ready' satisfies DocumentStatus }],
    },
    { partitionKey: library, pageSize: READY_PAGE },
    'the knowledge documents',
    readyRowSchema,
  ))
    for (const row of page) ready.push({ library, documentId: row.documentId, etag: row._etag });
  return ready;
}

const chunkRowSchema = knowledgeChunkSchema;

/**
 * A document's chunks, whole: one query in its own partition. A ready document's chunks do not change while its
 * record keeps the version it was read at (they are written before it turns ready and removed after it stops
 * being ready), so they are read once per version.
 */
function readDocumentChunks(
  chunks: Container,
  document: ReadyDocument,
): Promise<z.infer<typeof chunkRowSchema>[]> {
  return queryItems(
    chunks,
    { query: `SELECT ${VIEW_PROJECTION}, c.embedding FROM c` },
    [document.library, document.documentId],
    "the knowledge document's chunks",
    chunkRowSchema,
  );
}

/** What in-process ranking needs of a chunk. */
interface Candidate extends RankCandidate {
  view: ChunkView;
  vector: Float32Array;
  norm: number;
  text: TermCounts;
  match: TermCounts;
}

interface DocumentChunks {
  /** The document record's version its chunks were read at. */
  etag: string;
  candidates: Candidate[];
}

function toCandidate(chunk: z.infer<typeof chunkRowSchema>): Candidate {
  const { embedding, ...view } = chunk;
  // float32, as stored in the vector index: half the memory of numbers, the same values an embedding model sends.
  const vector = Float32Array.from(embedding);
  return {
    id: chunk.id,
    view,
    vector,
    norm: vectorNorm(vector),
    text: termCounts(chunk.text),
    match: termCounts(chunkMatchText(chunk)),
  };
}

/**
 * Documents' chunks by library and document at the record version they were read at; bounded by the chunks held,
 * least recently used document first out, never one the search in progress uses. A search uses an entry only when
 * the document is still ready at that version. An entry that does not fit (a document of more chunks than the
 * capacity, or than the room the running search leaves) is not kept: that search ranks it, and the next reads it
 * again, once, without evicting what the others cached.
 */
class DocumentChunkCache {
  readonly #entries = new Map<string, DocumentChunks>();
  #chunks = 0;
  constructor(private readonly capacity: number) {}

  get(document: ReadyDocument): DocumentChunks | undefined {
    const key = documentKey(document.library, document.documentId);
    const entry = this.#entries.get(key);
    if (entry === undefined || entry.etag !== document.etag) return undefined;
    this.#entries.delete(key);
    this.#entries.set(key, entry);
    return entry;
  }

  /**
   * Keeps the entry if it fits once entries not in `inUse` (keys of the running search's documents) are evicted,
   * least recently used first; otherwise evicts nothing and keeps it not (the caller still ranks it). Whether kept.
   */
  set(document: ReadyDocument, entry: DocumentChunks, inUse: ReadonlySet<string>): boolean {
    const key = documentKey(document.library, document.documentId);
    this.delete(document.library, document.documentId);
    const size = entry.candidates.length;
    let evictable = 0;
    for (const [other, held] of this.#entries) if (!inUse.has(other)) evictable += held.candidates.length;
    if (this.#chunks - evictable + size > this.capacity) return false;
    for (const [other, oldest] of this.#entries) {
      if (this.#chunks + size <= this.capacity) break;
      if (inUse.has(other)) continue;
      this.#entries.delete(other);
      this.#chunks -= oldest.candidates.length;
    }
    this.#entries.set(key, entry);
    this.#chunks += size;
    return true;
  }

  delete(library: string, documentId: string): void {
    const key = documentKey(library, documentId);
    const entry = this.#entries.get(key);
    if (entry === undefined) return;
    this.#entries.delete(key);
    this.#chunks -= entry.candidates.length;
  }
}

const documentKey = (library: string, documentId: string) => `${library}\u0000${documentId}`;
