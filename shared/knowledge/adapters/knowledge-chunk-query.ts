// The hybrid query the knowledge chunks' Cosmos DB adapter sends: the caller's libraries' visible chunks, narrowed
// to the documents a conversation's assistant and project name when they name any.
import { hybridSearchQuery, type HybridSearchQuery } from '../../cosmos/adapters/hybrid-search-query.js';
import { candidatePool } from '../../search/relevance.js';
import type { ChunkView } from '../contracts.js';
import type { ChunkQuery } from '../knowledge-chunks.js';

/** The fields a chunk is shown with: every field but the embedding (never sent back). */
const VIEW_FIELDS = [
  'id',
  'kind',
  'library',
  'documentId',
  'title',
  'index',
  'text',
  'headings',
  'pages',
  'tokens',
] as const satisfies readonly (keyof ChunkView)[];
export const VIEW_PROJECTION = VIEW_FIELDS.map((field) => `c.${field}`).join(', ');

/**
 * The hybrid query Cosmos DB answers, across the partitions of the caller's libraries, for the best candidatePool(limit)
 * chunks (those that earn their place are kept by the caller, as in process):
 *   SELECT TOP n <view fields>, VectorDistance(c.embedding, @vector) AS similarity FROM c
 *   WHERE ARRAY_CONTAINS(@libraries, c.library) AND NOT ARRAY_CONTAINS(@hidden, c.documentId)
 *     [AND ARRAY_CONTAINS(@documents, c.documentId): a search narrowed to named documents]
 *   ORDER BY RANK RRF(VectorDistance(c.embedding, @vector), FullTextScore(c.text, @t0, @t1, ...))
 * Built by ../../cosmos/adapters/hybrid-search-query.ts, as the summaries' query is (its syntax is explained there).
 *
 * Sent without a partition key, it runs across partitions. What @azure/cosmos 4.9 does with it (read in its source:
 * queryIterator.js, queryExecutionContext/hybridQueryExecutionContext.js):
 * - It sends the query to the gateway as it is, fetching the query plan alongside; a query the gateway cannot run
 *   alone (400 with additionalErrorInfo, as for any cross-partition ORDER BY) makes it run the plan instead.
 * - A plan with hybridSearchQueryInfo runs in a HybridQueryExecutionContext: the plan's global full-text statistics
 *   query over all the container's partition key ranges (effective-partition-key ranges: that the key is
 *   hierarchical, [library, documentId], changes nothing there), given the query's parameters, so the gateway's
 *   rewrite keeps the WHERE filter and BM25 counts the libraries' visible chunks, as in process; then one component
 *   query per rank over the plan's ranges, again with the parameters; then the fusion in the client (ranks shared
 *   by equal scores, Σ 1 / (60 + rank)) over the union of the components' top results, cut at TOP.
 * - A continuation token is refused for such queries; none is used (fetchAll).
 * Not verified against Azure here (the local server answers the whole query itself, test-only). A partition-key
 * prefix ([library]) would narrow a one-library search to its partitions, but a search reads two libraries.
 * The ready rule: chunks of documents that are not ready (HIDDEN_STATUSES) are excluded by id; the in-process path
 * ranks only ready documents' chunks instead. Both see the same chunks as long as no chunk outlives its document's
 * record: the delete removes the chunks before the record, and a worker that finds the record gone removes any
 * chunks it wrote. (A list of ready ids instead would hold every document of the shared library, unbounded.)
 */
export function chunkSearchQuery(query: ChunkQuery, hidden: readonly string[]): HybridSearchQuery {
  const narrowed = query.documentIds !== undefined;
  return hybridSearchQuery({
    projection: VIEW_PROJECTION,
    vectorPath: 'c.embedding',
    textPath: 'c.text',
    where: [
      'ARRAY_CONTAINS(@libraries, c.library)',
      'NOT ARRAY_CONTAINS(@hidden, c.documentId)',
      ...(narrowed ? ['ARRAY_CONTAINS(@documents, c.documentId)'] : []),
    ].join(' AND '),
    parameters: [
      { name: '@libraries', value: [...query.libraries] },
      { name: '@hidden', value: [...hidden] },
      ...(narrowed ? [{ name: '@documents', value: [...new Set(query.documentIds)] }] : []),
    ],
    text: query.text,
    vector: query.vector,
    limit: candidatePool(query.limit),
  });
}
