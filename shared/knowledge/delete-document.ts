// Deleting a document (DELETE /api/knowledge/documents/{documentId}), by its uploader only: the record is
// marked `deleting` first, which hides the document from search and from the API at once, then every chunk
// goes (one logical partition), then its bytes, then the record.
import { ForbiddenError, NotReadyError } from '../errors.js';
import type { KnowledgeDocument } from './contracts.js';
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
    const chunksRemoved = await finishDeleting(services, document);
    return { library: document.library, chunksRemoved };
  }
  throw new NotReadyError('The document is changing right now; delete it again in a moment.', 1);
}

/**
 * A delete's steps once the record is marked `deleting`: the chunks, the bytes of the record's attempt, then the
 * record — only if it is still that deleting one. An upload of the same content that met the mark finishes the
 * delete itself and stores the document anew at the next attempt, maybe while the delete that marked it is still
 * running: that delete's last step must not remove the new record. (The port deletes unconditionally, so a new
 * record written between this read and the delete would still go; the window is a point read wide.) Returns how
 * many chunks were removed.
 */
export async function finishDeleting(
  services: Pick<DeleteServices, 'documents' | 'chunks' | 'uploads'>,
  document: KnowledgeDocument,
): Promise<number> {
  const chunksRemoved = await services.chunks.remove(document.library, document.documentId);
  await services.uploads.remove(document.documentId, document.attempt, document.parts);
  const current = await services.documents.get(document.library, document.documentId);
  if (current?.document.status === 'deleting' && current.document.attempt === document.attempt)
    await services.documents.delete(document.library, document.documentId);
  return chunksRemoved;
}

function now(services: DeleteServices): string {
  return (services.now?.() ?? new Date()).toISOString();
}
