// The Cosmos DB database and containers the product uses. The local runtime provisions them from this
// definition and infra/ declares the same (infra/generated/definitions.json is generated from it and checked by a test).
// Partition keys and vector policies cannot change once a container exists, so containers are declared here, with
// their search policies, before the code that fills them arrives.

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
  /** One path: a plain (Hash) key. Two or three: a hierarchical (MultiHash) key, for data that can outgrow 20 GB per first-level value. */
  partitionKeyPaths: readonly string[];
  /** Default time to live in seconds; -1 = items expire only when they set `ttl`; undefined = never. */
  defaultTtlSeconds?: number;
  vectorEmbeddings?: readonly VectorEmbeddingSpec[];
  /** Each on a path of `vectorEmbeddings`; those paths are left out of the range index. */
  vectorIndexes?: readonly VectorIndexSpec[];
  fullTextPaths?: readonly FullTextPathSpec[];
  /** What the container holds, for readers of infra and the portal. */
  purpose: string;
}

export const COSMOS_DATABASE = 'chat';

export const SESSIONS_CONTAINER = 'sessions';
export const HOT_CONVERSATIONS_CONTAINER = 'hot-conversations';
export const CONVERSATIONS_CONTAINER = 'conversations';
export const CONVERSATION_MESSAGES_CONTAINER = 'conversation-messages';
export const TURN_EVENTS_CONTAINER = 'turn-events';
export const CONVERSATION_SUMMARIES_CONTAINER = 'conversation-summaries';
export const PROFILE_FACTS_CONTAINER = 'profile-facts';
export const KNOWLEDGE_DOCUMENTS_CONTAINER = 'knowledge-documents';
export const KNOWLEDGE_CHUNKS_CONTAINER = 'knowledge-chunks';

/** 24 h, the hot store's time to live (seed 000: the hot cache keeps active conversations for a day). */
export const HOT_STORE_TTL_SECONDS = 24 * 60 * 60;

const embedding: VectorEmbeddingSpec = {
  path: '/embedding',
  dataType: 'float32',
  distanceFunction: 'cosine',
};
const english = (path: string): FullTextPathSpec => ({ path, language: 'en-US' });

export const cosmosContainers: readonly ContainerSpec[] = [
  {
    id: SESSIONS_CONTAINER,
    partitionKeyPaths: ['/userId'],
    purpose: 'Chat sessions, one document per session, owned by a user.',
  },
  {
    id: HOT_CONVERSATIONS_CONTAINER,
    partitionKeyPaths: ['/sessionId'],
    defaultTtlSeconds: HOT_STORE_TTL_SECONDS,
    purpose:
      'Working memory of active conversations (the hot store) and the state of their running turns; expires 24 h after the last write.',
  },
  {
    id: TURN_EVENTS_CONTAINER,
    partitionKeyPaths: ['/sessionId'],
    defaultTtlSeconds: HOT_STORE_TTL_SECONDS,
    purpose:
      'The streamed events of each turn, one document per event, so a client that joins late or reconnects gets the whole response; expires after 24 h.',
  },
  {
    id: CONVERSATIONS_CONTAINER,
    partitionKeyPaths: ['/userId'],
    fullTextPaths: [english('/title')],
    purpose:
      'Long-term history: one small header per conversation (session) with its title, dates, counts and preview, listed by user; titles are full-text searchable.',
  },
  {
    id: CONVERSATION_MESSAGES_CONTAINER,
    partitionKeyPaths: ['/userId', '/sessionId'],
    fullTextPaths: [english('/content')],
    purpose:
      'Long-term history: one item per message, so no item grows with the conversation; keyed by user then session, so a heavy user is not capped at 20 GB; message text is full-text searchable (history search).',
  },
  {
    id: CONVERSATION_SUMMARIES_CONTAINER,
    partitionKeyPaths: ['/userId'],
    vectorEmbeddings: [embedding],
    vectorIndexes: [{ path: embedding.path, type: 'quantizedFlat' }],
    fullTextPaths: [english('/summary')],
    purpose:
      "Long-term memory: a summary of each past conversation (themes, persons, places, sentiment) with its embedding, searched within one user's summaries by vector, full text or both (hybrid).",
  },
  {
    id: PROFILE_FACTS_CONTAINER,
    partitionKeyPaths: ['/userId'],
    purpose:
      "Long-term memory: the user's structured profile, one item per fact (preference, interest, knowledge, goal, ...) with its provenance and validity.",
  },
  {
    id: KNOWLEDGE_DOCUMENTS_CONTAINER,
    partitionKeyPaths: ['/ownerId'],
    purpose: 'Knowledge base: one item per ingested document (source, title, status), listed by owner.',
  },
  {
    id: KNOWLEDGE_CHUNKS_CONTAINER,
    partitionKeyPaths: ['/ownerId', '/documentId'],
    vectorEmbeddings: [embedding],
    vectorIndexes: [{ path: embedding.path, type: 'diskANN' }],
    fullTextPaths: [english('/text')],
    purpose:
      "Knowledge base: the chunks of each document with their embeddings, keyed by owner then document; searched across an owner's documents by vector, full text or both (hybrid), with citations.",
  },
];
