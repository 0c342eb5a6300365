// The port of conversation summaries (container `conversation-summaries`, partition userId): one per conversation,
// written by the memory worker, searched by the tool search_conversation_history, the memory API and MCP. Adapter:
// adapters/cosmos-conversation-summaries.ts (nearest by vector, fused in process with BM25 over their words).
import type { Relevance } from '../search/relevance.js';
import type { ConversationSummaryDocument, ConversationSummaryView } from './contracts.js';
import type { MemoryScope } from '../conversation/memory-scope.js';

export interface StoredSummary {
  summary: ConversationSummaryDocument;
  /** Opaque version a later write is conditioned on. */
  version: string;
}

export interface SummaryQuery {
  /** The query's words, for the full-text rank. */
  text: string;
  /** The query's embedding, for the vector rank. */
  vector: number[];
  limit: number;
  /** What earns a summary its place: a word of the query, or a similarity at or above the model's threshold. */
  relevance: Relevance;
  /** Only the summaries of these scopes (absent: every scope). */
  scopes?: readonly MemoryScope[];
}

export interface SummaryMatch {
  summary: ConversationSummaryView;
  /** RRF score of the two ranks (higher is better). */
  score: number;
  /** Cosine similarity of the query's vector to the summary's. */
  similarity: number;
}

export interface SummaryPage {
  summaries: ConversationSummaryView[];
  continuationToken?: string;
}

export interface ConversationSummaries {
  get(userId: string, sessionId: string): Promise<StoredSummary | undefined>;
  /** Writes the summary if still at `version` (undefined: only if there is none yet); 'conflict' otherwise. */
  put(summary: ConversationSummaryDocument, version: string | undefined): Promise<'written' | 'conflict'>;
  /**
   * The user's summaries that earn their place (`relevance`, over summarySearchText), ranked for the query (hybrid:
   * vector and full text), best first, at most `limit`: none when nothing matches.
   */
  search(userId: string, query: SummaryQuery): Promise<SummaryMatch[]>;
  /**
   * The user's summaries, newest first, without vectors (only those of `scope` when it is set); the token is opaque
   * and bound to the user.
   */
  list(
    userId: string,
    options: { limit: number; continuationToken?: string; scope?: MemoryScope },
  ): Promise<SummaryPage>;
  /** Removes one conversation's summary; false when there was none. */
  delete(userId: string, sessionId: string): Promise<boolean>;
  /** Removes all of the user's summaries; returns how many. */
  deleteAll(userId: string): Promise<number>;
}

/**
 * The text a summary is searched by, for words: its summary and its themes, persons and places (a place named only in
 * `places` still finds the conversation).
 */
export function summarySearchText(
  summary: Pick<ConversationSummaryView, 'summary' | 'themes' | 'persons' | 'places'>,
): string {
  return [summary.summary, ...summary.themes, ...summary.persons, ...summary.places].join('\n');
}
