// The port of the knowledge base's chunks (container `knowledge-library-chunks`, partition [library,
// documentId]): written by the ingestion worker, removed with their document, searched by hybrid ranking.
import type { Relevance } from '../search/relevance.js';
import type { ChunkView, KnowledgeChunk } from './contracts.js';

export interface ChunkQuery {
  /** The libraries searched (a caller's private one and the shared one). */
  libraries: readonly string[];
  /**
   * The documents searched, when a conversation's assistant or project names its knowledge: only their chunks (and
   * only in `libraries`, so a document of someone else is never searched). Absent: every document of the libraries.
   */
  documentIds?: readonly string[];
  /** The query's words, for the full-text rank. */
  text: string;
  /** The query's embedding, for the vector rank. */
  vector: readonly number[];
  limit: number;
  /** What earns a chunk its place: a word of the query, or a similarity at or above the model's threshold. */
  relevance: Relevance;
}

export interface ChunkMatch {
  chunk: ChunkView;
  /** RRF score of the two ranks (higher is better), comparable within one result list. */
  score: number;
  /** Cosine similarity of the query's vector to the chunk's. */
  similarity: number;
}

export interface KnowledgeChunks {
  /** Writes the chunks (create or replace by id: writing the same chunk again changes nothing). */
  put(chunks: readonly KnowledgeChunk[]): Promise<void>;
  /** Removes the document's chunks whose index is `fromIndex` or more (0: all of them); returns how many. */
  remove(library: string, documentId: string, fromIndex?: number): Promise<number>;
  /**
   * The best chunks of the libraries' ready documents for the query that earn their place (`relevance`), best first,
   * at most `limit`: none when nothing matches.
   */
  search(query: ChunkQuery): Promise<ChunkMatch[]>;
}

/**
 * The words that admit a chunk to a search's results: its document's title, its headings and its text (a chunk
 * under "Sick leave" is about sick leave whether or not its text says so). Ranking by words uses the text alone.
 */
export function chunkMatchText(chunk: Pick<ChunkView, 'title' | 'headings' | 'text'>): string {
  return [chunk.title, ...chunk.headings, chunk.text].join('\n');
}
