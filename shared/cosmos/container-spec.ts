// How a Cosmos DB container is declared in code: each area declares its containers in its contracts module, and
// shared/app/cosmos-containers.ts lists them for the local runtime and infra/. Partition keys and vector policies
// cannot change once a container exists, so containers are declared, with their search policies, up front.

/** A property holding an embedding. Its length is not here: infra's embeddingDimensions sets it (LLM_EMBEDDING_DIMENSIONS). */
export interface VectorEmbeddingSpec {
  path: string;
  dataType: 'float32';
  distanceFunction: 'cosine';
}

/**
 * `quantizedFlat`: a brute-force search over compressed vectors, near-exact, for searches a filter or the partition
 * key narrows to a few thousand vectors (one user's summaries). `diskANN`: an approximate graph index whose cost
 * stays low as the vectors searched grow into the hundreds of thousands (a knowledge base).
 */
export interface VectorIndexSpec {
  path: string;
  type: 'quantizedFlat' | 'diskANN';
}

/** A string property indexed for FullTextContains / FullTextScore (BM25); each gets a full-text index too. */
export interface FullTextPathSpec {
  path: string;
  language: 'en-US';
}

export interface ContainerSpec {
  /** Container id. */
  id: string;
  /**
   * One path: a plain (Hash) key. Two or three: a hierarchical (MultiHash) key, for data that can outgrow 20 GB per
   * first-level value.
   */
  partitionKeyPaths: readonly string[];
  /** Default time to live in seconds; -1 = items expire only when they set `ttl`; undefined = never. */
  defaultTtlSeconds?: number;
  vectorEmbeddings?: readonly VectorEmbeddingSpec[];
  /** Each on a path of `vectorEmbeddings`; those paths are left out of the range index. */
  vectorIndexes?: readonly VectorIndexSpec[];
  fullTextPaths?: readonly FullTextPathSpec[];
  /** Properties left out of the index (large values no query filters on, such as an upload's bytes). */
  unindexedPaths?: readonly string[];
  /**
   * The only properties indexed (scalar paths such as `/sessionId`), for a container read by point reads and a few
   * fixed queries: a write then indexes these values instead of every property of what it holds (a conversation's
   * window of messages, a turn's events), which is what an indexed property costs in request units. Every query
   * on the container filters and sorts on these only. Absent: everything is indexed but `unindexedPaths`.
   */
  indexedPaths?: readonly string[];
  /** What the container holds, for readers of infra and the portal. */
  purpose: string;
}

/** The embedding property of summaries and knowledge chunks. */
export const EMBEDDING: VectorEmbeddingSpec = {
  path: '/embedding',
  dataType: 'float32',
  distanceFunction: 'cosine',
};

export function englishText(path: string): FullTextPathSpec {
  return { path, language: 'en-US' };
}
