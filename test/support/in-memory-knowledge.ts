// Hand-written in-memory twins of the knowledge area's ports (documents, chunks, upload parts), with the
// semantics of their Cosmos DB adapters, for tests of use-cases and endpoints in process.
import { ValidationError } from '../../shared/errors.js';
import {
  UPLOAD_PART_BYTES,
  type KnowledgeChunk,
  type KnowledgeDocument,
} from '../../shared/knowledge/contracts.js';
import {
  chunkMatchText,
  type ChunkMatch,
  type ChunkQuery,
  type KnowledgeChunks,
} from '../../shared/knowledge/knowledge-chunks.js';
import type {
  DocumentPage,
  KnowledgeDocuments,
  StoredDocument,
} from '../../shared/knowledge/knowledge-documents.js';
import type { KnowledgeUploads } from '../../shared/knowledge/knowledge-uploads.js';
import type { EmbedOptions, LlmGateway } from '../../shared/llm/llm-gateway.js';
import { rankQuery, termCounts } from '../../shared/search/hybrid-ranking.js';

const key = (library: string, documentId: string) => `${library}\u0000${documentId}`;

export class MemoryKnowledgeDocuments implements KnowledgeDocuments {
  readonly records = new Map<string, { document: KnowledgeDocument; version: number }>();
  private nextVersion = 1;

  get(library: string, documentId: string): Promise<StoredDocument | undefined> {
    const stored = this.records.get(key(library, documentId));
    return Promise.resolve(
      stored && { document: structuredClone(stored.document), version: String(stored.version) },
    );
  }

  create(document: KnowledgeDocument): Promise<'created' | 'exists'> {
    const k = key(document.library, document.documentId);
    if (this.records.has(k)) return Promise.resolve('exists');
    this.records.set(k, { document: structuredClone(document), version: this.nextVersion++ });
    return Promise.resolve('created');
  }

  replace(document: KnowledgeDocument, version: string): Promise<'written' | 'conflict'> {
    const k = key(document.library, document.documentId);
    const stored = this.records.get(k);
    if (stored === undefined || String(stored.version) !== version) return Promise.resolve('conflict');
    this.records.set(k, { document: structuredClone(document), version: this.nextVersion++ });
    return Promise.resolve('written');
  }

  list(
    library: string,
    options: { ownerId?: string; limit: number; continuationToken?: string },
  ): Promise<DocumentPage> {
    const scope = `${library}/${options.ownerId ?? ''}`;
    let offset = 0;
    if (options.continuationToken !== undefined) {
      const token = decodeToken(options.continuationToken);
      if (token?.scope !== scope)
        return Promise.reject(
          new ValidationError('The continuationToken belongs to another list: start again without it.'),
        );
      offset = token.offset;
    }
    const all = [...this.records.values()]
      .map((stored) => stored.document)
      .filter(
        (document) =>
          document.library === library &&
          document.status !== 'deleting' &&
          (options.ownerId === undefined || document.ownerId === options.ownerId),
      )
      .sort((a, b) => b.createdAt.localeCompare(a.createdAt) || a.id.localeCompare(b.id));
    const documents = all.slice(offset, offset + options.limit).map((document) => structuredClone(document));
    const next = offset + options.limit;
    return Promise.resolve({
      documents,
      ...(next < all.length ? { continuationToken: encodeToken({ scope, offset: next }) } : {}),
    });
  }

  delete(library: string, documentId: string): Promise<boolean> {
    return Promise.resolve(this.records.delete(key(library, documentId)));
  }

  /** The stored record, for assertions. */
  document(library: string, documentId: string): KnowledgeDocument | undefined {
    return this.records.get(key(library, documentId))?.document;
  }
}

function encodeToken(token: { scope: string; offset: number }): string {
  return Buffer.from(JSON.stringify(token)).toString('base64url');
}

function decodeToken(text: string): { scope: string; offset: number } | undefined {
  try {
    const value = JSON.parse(Buffer.from(text, 'base64url').toString('utf8')) as unknown;
    if (typeof value !== 'object' || value === null) return undefined;
    const { scope, offset } = value as { scope?: unknown; offset?: unknown };
    return typeof scope === 'string' && typeof offset === 'number' ? { scope, offset } : undefined;
  } catch {
    return undefined;
  }
}

/** Chunks by document, searched only where the documents' records say `ready` (the port's promise). */
export class MemoryKnowledgeChunks implements KnowledgeChunks {
  /** By document (library and documentId), then by index. */
  readonly stored = new Map<string, Map<number, KnowledgeChunk>>();
  /** Every search's query, for assertions. */
  readonly queries: ChunkQuery[] = [];

  constructor(private readonly documents: MemoryKnowledgeDocuments) {}

  put(chunks: readonly KnowledgeChunk[]): Promise<void> {
    for (const chunk of chunks) {
      const k = key(chunk.library, chunk.documentId);
      const forDocument = this.stored.get(k) ?? new Map<number, KnowledgeChunk>();
      this.stored.set(k, forDocument);
      forDocument.set(chunk.index, structuredClone(chunk));
    }
    return Promise.resolve();
  }

  remove(library: string, documentId: string, fromIndex = 0): Promise<number> {
    const forDocument = this.stored.get(key(library, documentId));
    let removed = 0;
    for (const index of [...(forDocument?.keys() ?? [])])
      if (index >= fromIndex && forDocument?.delete(index)) removed += 1;
    if (forDocument?.size === 0) this.stored.delete(key(library, documentId));
    return Promise.resolve(removed);
  }

  search(query: ChunkQuery): Promise<ChunkMatch[]> {
    this.queries.push(structuredClone(query));
    const candidates = [...this.stored.entries()].flatMap(([k, chunks]) => {
      const [library = '', documentId = ''] = k.split('\u0000');
      const ready = this.documents.document(library, documentId)?.status === 'ready';
      const named = query.documentIds === undefined || query.documentIds.includes(documentId);
      return ready && named && query.libraries.includes(library) ? [...chunks.values()] : [];
    });
    const ranked = rankQuery(
      candidates.map((chunk) => ({
        id: chunk.id,
        vector: chunk.embedding,
        text: termCounts(chunk.text),
        match: termCounts(chunkMatchText(chunk)),
        chunk,
      })),
      query,
    );
    return Promise.resolve(
      ranked.map(({ candidate, score, similarity }) => {
        const { embedding: _embedding, ...chunk } = candidate.chunk;
        return { chunk, score, similarity };
      }),
    );
  }

  /** A document's stored chunks in index order, for assertions. */
  of(library: string, documentId: string): KnowledgeChunk[] {
    return [...(this.stored.get(key(library, documentId))?.values() ?? [])].sort((a, b) => a.index - b.index);
  }

  /** How many chunks are stored, of every document. */
  get count(): number {
    return [...this.stored.values()].reduce((sum, chunks) => sum + chunks.size, 0);
  }
}

/** The key MemoryKnowledgeUploads keeps an attempt's parts under. */
export const uploadKey = (documentId: string, attempt: number) => `${documentId}.${attempt}`;

/**
 * Upload parts by document and attempt (`parts` is keyed by uploadKey), cut as the adapter cuts them (a test may
 * give a smaller part size).
 */
export class MemoryKnowledgeUploads implements KnowledgeUploads {
  readonly parts = new Map<string, Map<number, Uint8Array>>();

  constructor(private readonly partBytes: number = UPLOAD_PART_BYTES) {}

  put(documentId: string, attempt: number, content: Uint8Array): Promise<number> {
    const parts = new Map<number, Uint8Array>();
    const count = Math.max(1, Math.ceil(content.byteLength / this.partBytes));
    for (let part = 0; part < count; part += 1)
      parts.set(part, content.slice(part * this.partBytes, (part + 1) * this.partBytes));
    this.parts.set(uploadKey(documentId, attempt), parts);
    return Promise.resolve(count);
  }

  get(documentId: string, attempt: number, parts: number): Promise<Uint8Array | undefined> {
    const stored = this.parts.get(uploadKey(documentId, attempt));
    const pieces: Uint8Array[] = [];
    for (let part = 0; part < parts; part += 1) {
      const piece = stored?.get(part);
      if (piece === undefined) return Promise.resolve(undefined);
      pieces.push(piece);
    }
    return Promise.resolve(new Uint8Array(Buffer.concat(pieces)));
  }

  remove(documentId: string, attempt: number, parts: number): Promise<void> {
    const stored = this.parts.get(uploadKey(documentId, attempt));
    for (let part = 0; part < parts; part += 1) stored?.delete(part);
    if (stored?.size === 0) this.parts.delete(uploadKey(documentId, attempt));
    return Promise.resolve();
  }
}

/** The three knowledge stores over one another, as the app composes the adapters. */
export function memoryKnowledgeStores(options: { partBytes?: number } = {}) {
  const documents = new MemoryKnowledgeDocuments();
  return {
    documents,
    chunks: new MemoryKnowledgeChunks(documents),
    uploads: new MemoryKnowledgeUploads(options.partBytes),
  };
}

/** A stored document record for tests: ready, in `library`, owned by `ownerId`, with the fields given. */
export function knowledgeDocument(
  library: string,
  documentId: string,
  fields: Partial<KnowledgeDocument> = {},
): KnowledgeDocument {
  return {
    id: documentId,
    kind: 'knowledge-document',
    library,
    documentId,
    ownerId: library.startsWith('private:') ? library.slice('private:'.length) : 'user_003',
    title: 'Employee Handbook',
    titleGiven: true,
    format: 'markdown',
    mediaType: 'text/markdown',
    contentHash: 'c'.repeat(64),
    bytes: 100,
    parts: 1,
    status: 'ready',
    attempt: 1,
    createdAt: '2026-03-01T09:00:00.000Z',
    updatedAt: '2026-03-01T09:00:00.000Z',
    ...fields,
  };
}

/** A stored chunk for tests, its embedding given (a test's model embeds its text the same way). */
export function knowledgeChunk(
  document: Pick<KnowledgeDocument, 'library' | 'documentId' | 'title'>,
  index: number,
  text: string,
  embedding: number[],
  fields: Partial<KnowledgeChunk> = {},
): KnowledgeChunk {
  return {
    id: `${document.documentId}.${index}`,
    kind: 'knowledge-chunk',
    library: document.library,
    documentId: document.documentId,
    title: document.title,
    index,
    text,
    headings: [],
    tokens: Math.ceil(text.length / 4),
    embedding,
    ...fields,
  };
}

/**
 * A model whose embeddings count the given words in each text (plus a constant dimension, so no vector is all
 * zeros): search ranks by them deterministically. Keeps every embeddings request's texts; `failures` are thrown by
 * the next requests, one each. It does not chat.
 */
export class KeywordEmbeddings implements LlmGateway {
  readonly requests: string[][] = [];
  readonly failures: Error[] = [];
  constructor(private readonly keywords: readonly string[]) {}
  streamChat(): never {
    throw new Error('This test model only embeds.');
  }
  completeJson(): never {
    throw new Error('This test model only embeds.');
  }
  probe() {
    return Promise.resolve({ ok: true, detail: 'keyword embeddings' });
  }
  vector(text: string): number[] {
    const words = text.toLowerCase().split(/[^a-z0-9]+/);
    return [0.01, ...this.keywords.map((keyword) => words.filter((word) => word === keyword).length)];
  }
  embed(texts: string[], options?: EmbedOptions): Promise<number[][]> {
    this.requests.push([...texts]);
    const failure = this.failures.shift();
    if (failure !== undefined) return Promise.reject(failure);
    // A token per word, as an embeddings endpoint reports what it read.
    const promptTokens = texts.reduce((sum, text) => sum + text.split(/\s+/).filter(Boolean).length, 0);
    options?.onUsage?.({ usage: { promptTokens, completionTokens: 0, totalTokens: promptTokens } });
    return Promise.resolve(texts.map((text) => this.vector(text)));
  }
}
