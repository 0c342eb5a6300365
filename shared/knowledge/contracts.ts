// The knowledge area's contracts. Document ingestion and search (a later issue) declare here their queue message,
// their stored documents and chunks, the `search_knowledge_base` tool's input and output and their HTTP bodies.
import { EMBEDDING, englishText, type ContainerSpec } from '../cosmos/container-spec.js';

export const KNOWLEDGE_DOCUMENTS_CONTAINER = 'knowledge-documents';
export const KNOWLEDGE_CHUNKS_CONTAINER = 'knowledge-chunks';

export const knowledgeContainers: readonly ContainerSpec[] = [
  {
    id: KNOWLEDGE_DOCUMENTS_CONTAINER,
    partitionKeyPaths: ['/ownerId'],
    purpose: 'Knowledge base: one item per ingested document (source, title, status), listed by owner.',
  },
  {
    id: KNOWLEDGE_CHUNKS_CONTAINER,
    partitionKeyPaths: ['/ownerId', '/documentId'],
    vectorEmbeddings: [EMBEDDING],
    vectorIndexes: [{ path: EMBEDDING.path, type: 'diskANN' }],
    fullTextPaths: [englishText('/text')],
    purpose:
      "Knowledge base: the chunks of each document with their embeddings, keyed by owner then document; searched across an owner's documents by vector, full text or both (hybrid), with citations.",
  },
];
