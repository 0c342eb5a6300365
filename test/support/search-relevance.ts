// The relevance rules tests search with: every hit kept (tests of ranking alone), or the local runtime's own rule
// for the offline model's embeddings (tests of what a search returns).
import { OFFLINE_EMBEDDING_MODEL } from '../../local/offline-model/offline-model.js';
import { minSimilarityFor, type Relevance } from '../../shared/search/relevance.js';

/** Keeps every hit (every similarity is at least -1): the ranking alone decides, as before thresholds. */
export const EVERY_HIT: Relevance = { minSimilarity: -1, textMatchAdmits: true };

/** The default rule with the offline model's hashed embeddings, as `npm start` searches. */
export const OFFLINE_RELEVANCE: Relevance = {
  minSimilarity: minSimilarityFor(OFFLINE_EMBEDDING_MODEL),
  textMatchAdmits: true,
};
