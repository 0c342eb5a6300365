// The knowledge area's stores on Cosmos DB, each given the containers it uses. `ranking` says where chunk search is
// ranked: Cosmos DB's own hybrid search (Azure), or in process (the local server, which lacks it).
import type { Database } from '@azure/cosmos';
import type { FullTextMode } from '../../search/full-text.js';
import {
  KNOWLEDGE_CHUNKS_CONTAINER,
  KNOWLEDGE_DOCUMENTS_CONTAINER,
  KNOWLEDGE_UPLOADS_CONTAINER,
} from '../contracts.js';
import type { KnowledgeChunks } from '../knowledge-chunks.js';
import type { KnowledgeDocuments } from '../knowledge-documents.js';
import type { KnowledgeUploads } from '../knowledge-uploads.js';
import { createCosmosKnowledgeChunks } from './cosmos-knowledge-chunks.js';
import { createCosmosKnowledgeDocuments } from './cosmos-knowledge-documents.js';
import { createCosmosKnowledgeUploads } from './cosmos-knowledge-uploads.js';

export interface KnowledgeStores {
  documents: KnowledgeDocuments;
  chunks: KnowledgeChunks;
  uploads: KnowledgeUploads;
}

export function createKnowledgeStores(
  database: Database,
  options: { ranking: FullTextMode; cachedChunks?: number },
): KnowledgeStores {
  const documents = database.container(KNOWLEDGE_DOCUMENTS_CONTAINER);
  return {
    documents: createCosmosKnowledgeDocuments(documents),
    // Search reads the documents container too: only ready documents' chunks are searched.
    chunks: createCosmosKnowledgeChunks(database.container(KNOWLEDGE_CHUNKS_CONTAINER), documents, options),
    uploads: createCosmosKnowledgeUploads(database.container(KNOWLEDGE_UPLOADS_CONTAINER)),
  };
}
