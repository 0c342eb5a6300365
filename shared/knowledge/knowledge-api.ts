// Reading the knowledge base's documents (GET /api/knowledge/documents and .../{documentId}): a page of the
// caller's private library or of the shared one, and one document, looked for in the caller's own library
// first, then in the shared one.
import type { z } from 'zod';
import { NotFoundError } from '../errors.js';
import type { documentPageSchema, listDocumentsQuerySchema } from './contracts.js';
import { searchableLibraries, type DocumentView, type KnowledgeDocument } from './contracts.js';
import type { KnowledgeDocuments, StoredDocument } from './knowledge-documents.js';
import { libraryName, libraryOf } from './libraries.js';

export type ListDocumentsQuery = z.infer<typeof listDocumentsQuerySchema>;

export type DocumentPageView = z.infer<typeof documentPageSchema>;

/** A document as the API shows it to `userId`. */
export function documentView(document: KnowledgeDocument, userId: string): DocumentView {
  return {
    documentId: document.documentId,
    title: document.title,
    ...(document.fileName !== undefined ? { fileName: document.fileName } : {}),
    format: document.format,
    bytes: document.bytes,
    status: document.status,
    library: libraryName(document.library),
    ownedByYou: document.ownerId === userId,
    createdAt: document.createdAt,
    updatedAt: document.updatedAt,
    ...(document.pageCount !== undefined ? { pageCount: document.pageCount } : {}),
    ...(document.chunkCount !== undefined ? { chunkCount: document.chunkCount } : {}),
    ...(document.failure !== undefined ? { failure: document.failure } : {}),
  };
}

/** The caller's private library (the default) or the whole shared library, newest first. */
export async function listDocuments(
  documents: KnowledgeDocuments,
  userId: string,
  query: ListDocumentsQuery,
): Promise<DocumentPageView> {
  const page = await documents.list(libraryOf(query.library, userId), {
    limit: query.limit,
    ...(query.continuationToken !== undefined ? { continuationToken: query.continuationToken } : {}),
  });
  return {
    documents: page.documents.map((document) => documentView(document, userId)),
    ...(page.continuationToken !== undefined ? { continuationToken: page.continuationToken } : {}),
  };
}

/** One document the caller may read: theirs, or the shared library's; 404 otherwise. */
export async function getDocument(
  documents: KnowledgeDocuments,
  userId: string,
  documentId: string,
): Promise<DocumentView> {
  const found = await findReadable(documents, userId, documentId);
  if (found === undefined || found.document.status === 'deleting') throw documentNotFound(documentId);
  return documentView(found.document, userId);
}

/** The document in the caller's own library, else in the shared one (deleting or not). */
export async function findReadable(
  documents: KnowledgeDocuments,
  userId: string,
  documentId: string,
): Promise<StoredDocument | undefined> {
  for (const library of searchableLibraries(userId)) {
    const found = await documents.get(library, documentId);
    if (found !== undefined) return found;
  }
  return undefined;
}

export function documentNotFound(documentId: string): NotFoundError {
  return new NotFoundError(`No document ${documentId} in your library or the shared library.`);
}
