// Hybrid ranking in process (conversation summaries, knowledge chunks), for where Cosmos DB lacks
// VectorDistance, FullTextScore and RRF (the local server): the same three steps Cosmos DB's hybrid search
// takes, as pure functions.
import { queryWords, stem, words } from './full-text.js';
import { admitted, candidatePool, type Relevance } from './relevance.js';

/** Reciprocal rank fusion's constant (Cosmos DB's RRF uses the customary 60). */
export const RRF_K = 60;

/** BM25's customary parameters (Lucene's and Azure AI Search's defaults): term saturation and length weight. */
export const BM25_K1 = 1.2;
export const BM25_B = 0.75;

/** Cosine similarity of two vectors (-1..1); 0 when either is all zeros or their lengths differ. */
export function cosineSimilarity(a: ArrayLike<number>, b: ArrayLike<number>): number {
  return cosineWithNorms(a, vectorNorm(a), b, vectorNorm(b));
}

/** A vector's Euclidean length (kept beside a cached vector, so a search computes only dot products). */
export function vectorNorm(vector: ArrayLike<number>): number {
  let sum = 0;
  for (let i = 0; i < vector.length; i++) sum += (vector[i] as number) * (vector[i] as number);
  return Math.sqrt(sum);
}

function cosineWithNorms(a: ArrayLike<number>, normA: number, b: ArrayLike<number>, normB: number): number {
  if (a.length !== b.length || normA === 0 || normB === 0) return 0;
  let dot = 0;
  for (let i = 0; i < a.length; i++) dot += (a[i] as number) * (b[i] as number);
  return dot / (normA * normB);
}

/** A text as BM25 sees it: how often each stem occurs, and how many words it has. */
export interface TermCounts {
  counts: ReadonlyMap<string, number>;
  length: number;
}

/** The stems of a text with their counts (computed once per stored version of a summary, then cached). */
export function termCounts(text: string): TermCounts {
  const counts = new Map<string, number>();
  const all = words(text);
  for (const word of all) {
    const stemmed = stem(word);
    counts.set(stemmed, (counts.get(stemmed) ?? 0) + 1);
  }
  return { counts, length: all.length };
}

/**
 * The stems a query is scored on: one per word that counts (stop words dropped, repeated words once), as the
 * Cosmos DB path sends each such word to FullTextScore as one term; two words of one stem count twice, there too.
 * Empty: the query has no full-text part, and ranking is by vector alone.
 */
export function queryTerms(text: string): string[] {
  return queryWords(text).map(stem);
}

/**
 * BM25 of each document for the query's terms, over the documents given (they are the corpus: document count,
 * average length and each term's document frequency come from them). IDF is the non-negative form,
 * ln(1 + (N - n + 0.5) / (n + 0.5)).
 */
export function bm25Scores(terms: readonly string[], documents: readonly TermCounts[]): number[] {
  const total = documents.length;
  if (total === 0 || terms.length === 0) return documents.map(() => 0);
  const averageLength = documents.reduce((sum, document) => sum + document.length, 0) / total || 1;
  const idf = terms.map((term) => {
    let containing = 0;
    for (const document of documents) if (document.counts.has(term)) containing++;
    return Math.log(1 + (total - containing + 0.5) / (containing + 0.5));
  });
  return documents.map((document) => {
    let score = 0;
    terms.forEach((term, i) => {
      const frequency = document.counts.get(term) ?? 0;
      if (frequency === 0) return;
      const norm = BM25_K1 * (1 - BM25_B + (BM25_B * document.length) / averageLength);
      score += ((idf[i] as number) * frequency * (BM25_K1 + 1)) / (frequency + norm);
    });
    return score;
  });
}

/**
 * 1-based ranks of `scores`, higher first; equal scores share a rank and the next distinct score takes the next
 * one (1, 2, 2, 3), as @azure/cosmos ranks component scores before fusing them.
 */
export function denseRanks(scores: readonly number[]): number[] {
  const order = Uint32Array.from(scores.keys()).sort((a, b) => (scores[b] as number) - (scores[a] as number));
  const ranks = new Array<number>(scores.length);
  let rank = 0;
  let previous: number | undefined;
  for (const index of order) {
    const score = scores[index] as number;
    if (previous === undefined || score !== previous) rank++;
    previous = score;
    ranks[index] = rank;
  }
  return ranks;
}

/** Reciprocal rank fusion of one item's ranks (one per component). */
export function rrfScore(ranks: readonly number[], k: number = RRF_K): number {
  return ranks.reduce((sum, rank) => sum + 1 / (k + rank), 0);
}

/** One candidate for ranking: its id (the tie-break), its embedding and its summary's term counts. */
export interface RankCandidate {
  id: string;
  vector: ArrayLike<number>;
  /** The vector's norm when known (vectorNorm), so ranking computes one dot product per candidate. */
  norm?: number;
  /** The words ranked by BM25: those of the store's full-text path. */
  text: TermCounts;
  /** The words that admit the candidate (a word of the query among them), when more than `text`: e.g. headings. */
  match?: TermCounts;
}

export interface Ranked {
  id: string;
  /** The RRF score (higher is better), comparable within one result list only. */
  score: number;
  similarity: number;
}

/**
 * The best `limit` candidates for a query: RRF of the vector rank and (when the query has terms) the BM25 rank,
 * over all candidates; by vector alone when `terms` is empty.
 */
export function rankHybrid(
  candidates: readonly RankCandidate[],
  query: { vector: readonly number[]; terms: readonly string[] },
  limit: number,
): Ranked[] {
  if (limit < 1) return [];
  const queryVector = Float64Array.from(query.vector);
  const queryNorm = vectorNorm(queryVector);
  return fuseRanks(
    candidates.map((candidate) => ({
      id: candidate.id,
      similarity: cosineWithNorms(
        queryVector,
        queryNorm,
        candidate.vector,
        candidate.norm ?? vectorNorm(candidate.vector),
      ),
      text: candidate.text,
    })),
    query.terms,
    limit,
  );
}

/** A candidate whose similarity to the query is known already (Cosmos DB's VectorDistance, or computed here). */
export interface ScoredCandidate {
  id: string;
  similarity: number;
  text: TermCounts;
  match?: TermCounts;
}

/**
 * The best `limit` of candidates whose similarities are known: RRF of the similarity rank and (when there are terms)
 * the BM25 rank over these candidates, which are the corpus.
 */
export function fuseRanks(
  candidates: readonly ScoredCandidate[],
  terms: readonly string[],
  limit: number,
): Ranked[] {
  if (limit < 1) return [];
  const similarities = candidates.map((candidate) => candidate.similarity);
  const components = [denseRanks(similarities)];
  if (terms.length > 0)
    components.push(
      denseRanks(
        bm25Scores(
          terms,
          candidates.map((candidate) => candidate.text),
        ),
      ),
    );
  // Only the best `limit` are kept as they come, not all candidates sorted: a search wants 5, a user has thousands.
  const best: Ranked[] = [];
  candidates.forEach((candidate, i) => {
    const item = {
      id: candidate.id,
      score: rrfScore(components.map((ranks) => ranks[i] as number)),
      similarity: similarities[i] as number,
    };
    if (best.length === limit && compareRanked(item, best[best.length - 1] as Ranked) >= 0) return;
    let at = best.length;
    while (at > 0 && compareRanked(item, best[at - 1] as Ranked) < 0) at--;
    best.splice(at, 0, item);
    if (best.length > limit) best.pop();
  });
  return best;
}

/**
 * The `count` candidates most similar to the vector, most similar first, equal similarities by id: what Cosmos DB's
 * `SELECT TOP n ... ORDER BY VectorDistance(...)` returns, as candidates whose similarity is known.
 */
export function nearest<C extends RankCandidate>(
  candidates: readonly C[],
  vector: readonly number[],
  count: number,
): (C & { similarity: number })[] {
  const queryVector = Float64Array.from(vector);
  const queryNorm = vectorNorm(queryVector);
  return candidates
    .map((candidate) => ({
      ...candidate,
      similarity: cosineWithNorms(
        queryVector,
        queryNorm,
        candidate.vector,
        candidate.norm ?? vectorNorm(candidate.vector),
      ),
    }))
    .sort((a, b) => b.similarity - a.similarity || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
    .slice(0, Math.max(0, count));
}

/** Best first: fused score, then similarity, then id (so equal items come out in one order, whatever came in). */
function compareRanked(a: Ranked, b: Ranked): number {
  return b.score - a.score || b.similarity - a.similarity || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
}

/** The words of a search sent to Cosmos DB's FullTextScore, at most; more add cost and hardly change the ranking. */
export const MAX_SEARCH_TERMS = 16;

/** The words a hybrid query sends to Cosmos DB's FullTextScore, each as its own term. */
export function searchWords(text: string): string[] {
  return queryWords(text).slice(0, MAX_SEARCH_TERMS);
}

/** A search as the stores take it: its words, its embedding, how many results at most, and what earns a place. */
export interface RankQuery {
  text: string;
  vector: readonly number[];
  limit: number;
  relevance: Relevance;
}

/**
 * A hybrid query ranked in process over its candidates, as the Cosmos DB query ranks them (on the same words,
 * searchWords): the best candidatePool(limit) by RRF over all, then those that earn their place (admitted), at most
 * `limit`; each result with the candidate it is.
 */
export function rankQuery<C extends RankCandidate>(
  candidates: readonly C[],
  query: RankQuery,
): { candidate: C; score: number; similarity: number }[] {
  const byId = new Map(candidates.map((candidate) => [candidate.id, candidate]));
  const terms = searchTerms(query.text);
  return rankHybrid(candidates, { vector: query.vector, terms }, candidatePool(query.limit))
    .map(({ id, score, similarity }) => ({ candidate: byId.get(id) as C, score, similarity }))
    .filter(({ candidate, similarity }) =>
      admitted(query.relevance, { similarity, text: candidate.match ?? candidate.text }, terms),
    )
    .slice(0, Math.max(0, query.limit));
}

/**
 * Candidates whose similarity is known (the nearest by vector: Cosmos DB's answer, or nearest() in process) fused
 * with their BM25 rank over themselves, those that earn their place, at most `limit`, best first.
 */
export function rankCandidates<C extends ScoredCandidate>(
  candidates: readonly C[],
  query: Omit<RankQuery, 'vector'>,
): { candidate: C; score: number; similarity: number }[] {
  const byId = new Map(candidates.map((candidate) => [candidate.id, candidate]));
  const terms = searchTerms(query.text);
  const kept = candidates.filter((candidate) =>
    admitted(
      query.relevance,
      { similarity: candidate.similarity, text: candidate.match ?? candidate.text },
      terms,
    ),
  );
  return fuseRanks(kept, terms, query.limit).map(({ id, score, similarity }) => ({
    candidate: byId.get(id) as C,
    score,
    similarity,
  }));
}

/** The stems a search scores and admits on: those of searchWords. */
export function searchTerms(text: string): string[] {
  return searchWords(text).map(stem);
}
