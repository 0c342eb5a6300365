// Which hits a search may return: a hit earns its place by holding a word of the query, or by a vector similarity
// at or above a threshold that depends on the embedding model (each model spreads its cosine similarities its own
// way). A query that matches nothing returns nothing, rather than the least bad of everything.

export interface Relevance {
  /** Cosine similarity from which a hit is kept on meaning alone (-1..1). */
  minSimilarity: number;
  /** Whether a hit that holds a word of the query (by stem) is kept whatever its similarity. */
  textMatchAdmits: boolean;
}

/**
 * The similarity from which a hit counts as related, per embedding model, matched as a part of the model (or Azure
 * deployment) name, first match wins. Published measurements of OpenAI's text-embedding-3 models put unrelated texts
 * around 0.1-0.2 and a question related to a passage around 0.4; ada-002 crowds everything into 0.7-0.9. The offline
 * stand-in's hashed embeddings only measure shared words (local/offline-model/README.md): at 0.3 a hit shares about
 * a third of its content words with the query, which a hash collision alone never reaches.
 */
export const MODEL_MIN_SIMILARITY: readonly (readonly [string, number])[] = [
  ['text-embedding-3', 0.3],
  ['ada-002', 0.8],
  ['offline-stand-in-embedding', 0.3],
];

/** The threshold of a model that the table does not know: that of text-embedding-3 (set SEARCH_MIN_SIMILARITY). */
export const DEFAULT_MIN_SIMILARITY = 0.3;

/** The default threshold for the embedding model (or deployment) named. */
export function minSimilarityFor(embeddingModel: string): number {
  const name = embeddingModel.toLowerCase();
  return MODEL_MIN_SIMILARITY.find(([part]) => name.includes(part))?.[1] ?? DEFAULT_MIN_SIMILARITY;
}

/**
 * Candidates a search ranks before it keeps the admitted ones: the best this many by the store's ranking, so the
 * results stay bounded by this, not by the store, while a search for a few still finds them among more.
 */
export const SEARCH_CANDIDATES = 50;

/** How many candidates a search for `limit` results ranks. */
export function candidatePool(limit: number): number {
  return Math.max(Math.floor(limit), SEARCH_CANDIDATES);
}

/** Whether a hit of this similarity and text earns its place for a query of these stems (searchTerms). */
export function admitted(
  relevance: Relevance,
  hit: { similarity: number; text: { counts: ReadonlyMap<string, number> } },
  terms: readonly string[],
): boolean {
  if (hit.similarity >= relevance.minSimilarity) return true;
  return relevance.textMatchAdmits && terms.some((term) => hit.text.counts.has(term));
}
