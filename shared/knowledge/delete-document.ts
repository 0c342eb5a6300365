// Deleting a document (DELETE /api/knowledge/documents/{documentId}), by its uploader only: the record is marked
// `deleting` first, which hides the document from search and from the API at once, then every chunk goes (one
// logical partition), then its bytes, then the record. A delete that stopped halfway is finished by the next one,
// and a worker still ingesting the document sees the mark (or the record gone) and removes what it wrote.
import { ForbiddenError, NotReadyError } from '../errors.js';
import type { KnowledgeChunks } from './knowledge-chunks.js';
import type { KnowledgeDocuments } from './knowledge-documents.js';
import type { KnowledgeUploads } from './knowledge-uploads.js';
import { documentNotFound, findReadable } from './knowledge-api.js';

export interface DeleteServices {
  documents: KnowledgeDocuments;
  chunks: KnowledgeChunks;
  uploads: KnowledgeUploads;
  now?: () => Date;
}

export interface DeleteOutcome {
  library: string;
  chunksRemoved: number;
}

/** Conditional writes tried before giving up (a worker changing the record meanwhile makes one conflict). */
const MARK_ATTEMPTS = 5;

export async function deleteDocument(
  services: DeleteServices,
  userId: string,
  documentId: string,
): Promise<DeleteOutcome> {
  for (let attempt = 0; attempt < MARK_ATTEMPTS; attempt += 1) {
    const found = await findReadable(services.documents, userId, documentId);
    if (found === undefined) throw documentNotFound(documentId);
    const { document, version } = found;
    if (document.ownerId !== userId)
      throw new ForbiddenError(
        'This document is in the shared library and was uploaded by another user: only they can delete it.',
      );
    if (document.status !== 'deleting') {
      const marked = { ...document, status: 'deleting' as const, updatedAt: now(services) };
      if ((await services.documents.replace(marked, version)) === 'conflict') continue;
    }
    const chunksRemoved = await services.chunks.remove(document.library, documentId);
    await services.uploads.remove(documentId, document.attempt, document.parts);
    await services.documents.delete(document.library, documentId);
    return { library: document.library, chunksRemoved };
  }
  throw new NotReadyError('The document is changing right now; delete it again in a moment.', 1);
}

function now(services: DeleteServices): string {
  return (services.now?.() ?? new Date()).toISOString();
}
