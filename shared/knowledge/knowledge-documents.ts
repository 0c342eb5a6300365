// The port of the knowledge base's documents (container `knowledge-library-documents`, partition library, id = documentId):
// one record per document with its status, written by the upload, the ingestion worker and the delete, read by the
// API and by search (which only ever searches `ready` documents). Adapter: adapters/cosmos-knowledge-documents.ts.
import type { KnowledgeDocument } from './contracts.js';

export interface StoredDocument {
  document: KnowledgeDocument;
  /** Opaque version a later write is conditioned on. */
  version: string;
}

export interface DocumentPage {
  documents: KnowledgeDocument[];
  /** Opaque, bound to the library (and owner filter) it was given for. */
  continuationToken?: string;
}

export interface KnowledgeDocuments {
  get(library: string, documentId: string): Promise<StoredDocument | undefined>;
  /** Creates the record; 'exists' when one with its id is already in its library (nothing is changed then). */
  create(document: KnowledgeDocument): Promise<'created' | 'exists'>;
  /** Replaces the record if it is still at `version`; 'conflict' when it changed or is gone. */
  replace(document: KnowledgeDocument, version: string): Promise<'written' | 'conflict'>;
  /**
   * A library's documents, newest first, without those being deleted; only `ownerId`'s when given. The token is
   * opaque and refused (400) for another library or owner.
   */
  list(
    library: string,
    options: { ownerId?: string; limit: number; continuationToken?: string },
  ): Promise<DocumentPage>;
  /** Removes the record; false when there was none. */
  delete(library: string, documentId: string): Promise<boolean>;
}
