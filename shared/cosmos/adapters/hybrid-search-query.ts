// The hybrid search query Cosmos DB answers (RRF of VectorDistance and FullTextScore), built one way for every
// container searched by meaning and words (conversation summaries, knowledge chunks), and the score a result is
// given at its place in the fused order. The words are the ones the in-process ranking uses (searchWords).
import type { SqlParameter, SqlQuerySpec } from '@azure/cosmos';
import { RRF_K, searchWords } from '../../search/hybrid-ranking.js';

export interface HybridSearch {
  /** The fields each result carries, e.g. `c.id, c.text`. */
  projection: string;
  /** The vector and the text searched, e.g. `c.embedding`, `c.text`. */
  vectorPath: string;
  textPath: string;
  /** The filter, with its own parameters (never @vector or @t0, @t1, ...). */
  where: string;
  parameters: readonly SqlParameter[];
  text: string;
  vector: readonly number[];
  limit: number;
}

export interface HybridSearchQuery {
  query: SqlQuerySpec;
  /** How many ranks are fused: 2, or 1 when the text has no word to score. */
  components: 1 | 2;
}

/**
 * Syntax as documented (learn.microsoft.com/azure/cosmos-db/nosql/query/rrf and .../order-by-rank):
 * - FullTextScore takes each term as its own string argument; the array form `[...]` of early previews was
 *   dropped (Azure/azure-sdk-for-js PR #34332 moved the SDK's samples and tests to separate terms). The terms and
 *   the vector are parameters: @azure/cosmos passes the query's parameters on to the global-statistics and
 *   component queries it derives from a hybrid query (HybridQueryExecutionContext).
 *   Not verified against Azure here: Azure/azure-sdk-for-java issue #46267 reported parameterised FullTextScore
 *   terms failing with a partition key (filed as a Java SDK bug); if Azure refuses them, inline the words as
 *   escaped string literals in this one function.
 * - TOP is a literal (a validated integer): EF Core's Cosmos provider turns OFFSET/LIMIT parameters into constants
 *   when ORDER BY RANK is present (dotnet/efcore PR #35868), so a literal is the form known to work.
 * - RRF's optional weights are left out: both ranks count alike, as in process.
 * - FullTextScore and RRF cannot be projected; VectorDistance can (the similarity).
 * With no full-text terms (a query of stop words only), ranking is by VectorDistance alone (most similar first), as
 * the in-process ranking does.
 *
 *   SELECT TOP n <projection>, VectorDistance(<vector>, @vector) AS similarity FROM c WHERE <where>
 *   ORDER BY RANK RRF(VectorDistance(<vector>, @vector), FullTextScore(<text>, @t0, @t1, ...))
 */
export function hybridSearchQuery(search: HybridSearch): HybridSearchQuery {
  const limit = Math.max(1, Math.floor(search.limit));
  const terms = searchWords(search.text);
  const distance = `VectorDistance(${search.vectorPath}, @vector)`;
  const order =
    terms.length === 0
      ? `ORDER BY ${distance}`
      : `ORDER BY RANK RRF(${distance}, FullTextScore(${search.textPath}, ${terms.map((_, i) => `@t${i}`).join(', ')}))`;
  return {
    query: {
      query: `SELECT TOP ${limit} ${search.projection}, ${distance} AS similarity FROM c WHERE ${search.where} ${order}`,
      parameters: [
        ...search.parameters,
        { name: '@vector', value: [...search.vector] },
        ...terms.map((term, i) => ({ name: `@t${i}`, value: term })),
      ],
    },
    components: terms.length === 0 ? 1 : 2,
  };
}

/**
 * Cosmos DB returns the fused order, not the fused score (RRF cannot be projected). A result's score is the RRF
 * score it would have at its place in every ranking, components / (RRF_K + rank): higher is better and comparable
 * within one list, on the same scale as the in-process scores, not equal to them.
 */
export function scoreAtPosition(components: 1 | 2, position: number): number {
  return components / (RRF_K + position + 1);
}

/**
 * The `limit` items nearest to the vector, most similar first, with their similarity:
 *   SELECT TOP n <projection>, VectorDistance(<vector>, @vector) AS similarity FROM c WHERE <where>
 *   ORDER BY VectorDistance(<vector>, @vector)
 * A plain vector search (no full-text function, no RRF), which Cosmos DB answers from the vector index within one
 * partition as well as across partitions; the caller fuses full-text scores in process over these candidates.
 */
export function nearestQuery(search: Omit<HybridSearch, 'textPath' | 'text'>): SqlQuerySpec {
  return hybridSearchQuery({ ...search, textPath: '', text: '' }).query;
}
