// Uploading a document to the knowledge base (POST /api/knowledge/documents): the body's checks that need no
// parsing of the content (size, type, a PDF that is one, text that is UTF-8), then the document's record and
// bytes, and its message on the ingestion queue; the worker (ingest-document.ts) does the rest.
import { createHash } from 'node:crypto';
import { z } from 'zod';
import { cleanDisplayText } from '../plain-text.js';
import { AppError, NotReadyError, ValidationError } from '../errors.js';
import type { MessagePublisher } from '../messaging/message-publisher.js';
import { admitUpload, type QuotaServices } from '../quota/quota-gate.js';
import {
  DOCUMENT_EXTENSIONS,
  DOCUMENT_MEDIA_TYPES,
  ingestMessageId,
  KNOWLEDGE_INGEST_QUEUE,
  privateLibrary,
  SHARED_LIBRARY,
  MAX_TITLE_CHARS,
  uploadDocumentJsonSchema,
  type DocumentFormat,
  type DocumentUpload,
  type DocumentView,
  type IngestDocumentMessage,
  type KnowledgeDocument,
} from './contracts.js';
import { finishDeleting } from './delete-document.js';
import type { KnowledgeChunks } from './knowledge-chunks.js';
import { documentView } from './knowledge-api.js';
import type { KnowledgeDocuments, StoredDocument } from './knowledge-documents.js';
import type { KnowledgeUploads } from './knowledge-uploads.js';
import { uploadLibrary, type LibraryCaller } from './libraries.js';
import type { KnowledgeConfig } from './settings.js';

export interface UploadServices {
  documents: KnowledgeDocuments;
  /** Only to finish the delete of a document being deleted when its content is uploaded again. */
  chunks: KnowledgeChunks;
  uploads: KnowledgeUploads;
  publisher: MessagePublisher;
  settings: Pick<KnowledgeConfig, 'maxDocumentBytes' | 'sharedLibrary'>;
  /**
   * New content reserves its bytes (QUOTA_KNOWLEDGE_BYTES) and its ingestion's tokens (QUOTA_TOKENS_PER_DAY,
   * QUOTA_COST_PER_MONTH) before anything of it is stored, or is refused (429).
   */
  quota?: QuotaServices;
  now?: () => Date;
}

/** The title of a document its uploader did not name, until the worker finds the one its content gives. */
export const UNTITLED_DOCUMENT = 'Untitled document';

/** A document larger than KNOWLEDGE_MAX_DOCUMENT_BYTES. */
export class DocumentTooLargeError extends AppError {
  constructor(limitBytes: number) {
    super(
      'document_too_large',
      `The document is larger than ${limitBytes} bytes, the most the knowledge base accepts (KNOWLEDGE_MAX_DOCUMENT_BYTES).`,
      413,
    );
  }
}

/** Content the knowledge base does not read, or that is not what its type says. */
export class UnsupportedDocumentTypeError extends AppError {
  constructor(message: string) {
    super('unsupported_document_type', message, 415);
  }
}

const SUPPORTED_TYPES =
  'Markdown (text/markdown, .md), plain text (text/plain, .txt), HTML (text/html, .html) and PDF (application/pdf, .pdf)';

/** A PDF's header may follow a little junk (readers search the first kilobyte for it). */
const PDF_HEADER_WINDOW = 1024;

export interface UploadResult {
  /** 202: queued (new, or queued again); 200: the same content is already in the library, ready. */
  status: 200 | 202;
  document: DocumentView;
}

/** Conditional writes tried before the upload gives up (only a concurrent upload or delete makes one conflict). */
const WRITE_ATTEMPTS = 3;

export async function uploadDocument(
  services: UploadServices,
  caller: LibraryCaller,
  upload: DocumentUpload,
): Promise<UploadResult> {
  const { format, mediaType } = checkUpload(upload, services.settings.maxDocumentBytes);
  const library = uploadLibrary(caller, services.settings.sharedLibrary);
  const contentHash = createHash('sha256').update(upload.content).digest('hex');
  const documentId = documentIdFor(library, contentHash);
  const title = titleOf(upload);
  const now = () => (services.now?.() ?? new Date()).toISOString();
  // 1 for content new to the library; one more than the deleted document's when the upload finished its delete.
  let firstAttempt = 1;

  for (let attempt = 0; attempt < WRITE_ATTEMPTS; attempt += 1) {
    const stored = await services.documents.get(library, documentId);
    if (stored !== undefined) {
      const result = await uploadAgain(services, caller, stored, { upload, format, mediaType, title, now });
      if (result === 'conflict') continue;
      if ('deletedAttempt' in result) {
        firstAttempt = result.deletedAttempt + 1;
        continue;
      }
      return result;
    }
    // Only content new to the library adds bytes: an upload again of a stored document is never refused.
    const admission = services.quota
      ? await admitUpload(services.quota, caller, { documentId, bytes: upload.content.byteLength }, () =>
          ownedBytes(services.documents, caller.userId),
        )
      : undefined;
    let created: KnowledgeDocument | undefined;
    try {
      created = await storeNew(
        services,
        caller,
        upload,
        { format, mediaType, title, now },
        { library, documentId, contentHash, firstAttempt },
      );
    } finally {
      // Stored, its bytes are counted with the documents; not stored, nothing of it stays reserved.
      await admission?.release(created !== undefined);
    }
    if (created === undefined) continue;
    // A crash right here leaves the record queued without a message: the client's retry of the upload sends it.
    await queueIngestion(services.publisher, created);
    return { status: 202, document: documentView(created, caller.userId) };
  }
  throw new NotReadyError('The document is being changed by another request; upload it again.', 1);
}

/** Stores new content and its record; undefined when another upload of it created the record meanwhile. */
async function storeNew(
  services: UploadServices,
  caller: LibraryCaller,
  upload: DocumentUpload,
  prepared: Omit<Prepared, 'upload'>,
  stored: { library: string; documentId: string; contentHash: string; firstAttempt: number },
): Promise<KnowledgeDocument | undefined> {
  const { format, mediaType, title, now } = prepared;
  const { library, documentId, contentHash, firstAttempt } = stored;
  const parts = await services.uploads.put(documentId, firstAttempt, upload.content);
  const at = now();
  const document: KnowledgeDocument = {
    id: documentId,
    kind: 'knowledge-document',
    library,
    documentId,
    ownerId: caller.userId,
    title: title.text,
    titleGiven: title.given,
    ...(upload.fileName !== undefined ? { fileName: upload.fileName } : {}),
    format,
    mediaType,
    contentHash,
    bytes: upload.content.byteLength,
    parts,
    status: 'queued',
    attempt: firstAttempt,
    createdAt: at,
    updatedAt: at,
  };
  return (await services.documents.create(document)) === 'exists' ? undefined : document;
}

interface Prepared {
  upload: DocumentUpload;
  format: DocumentFormat;
  mediaType: string;
  title: { text: string; given: boolean };
  now: () => string;
}

/**
 * The upload of content the library has a record of: the answer, 'conflict' when the record changed meanwhile, or
 * the attempt of a document being deleted whose delete it finished (the caller then stores the document anew).
 */
async function uploadAgain(
  services: UploadServices,
  caller: LibraryCaller,
  { document, version }: StoredDocument,
  prepared: Prepared,
): Promise<UploadResult | 'conflict' | { deletedAttempt: number }> {
  switch (document.status) {
    case 'ready':
      return { status: 200, document: documentView(document, caller.userId) };
    case 'queued':
    case 'processing':
      // Queued again: a message lost between the record's write and the queue (a crash) is sent now; a duplicate
      // is dropped by the queue's duplicate detection, or acknowledged by the worker.
      await queueIngestion(services.publisher, document);
      return { status: 202, document: documentView(document, caller.userId) };
    case 'deleting':
      // Deleted a moment ago (or by a delete that stopped halfway): the upload finishes the delete rather than
      // refuse until someone does. The document is then stored anew at the next attempt, so its bytes and its queue
      // message are never taken for the deleted one's (by a late step of that delete, or by duplicate detection).
      await finishDeleting(services, document);
      return { deletedAttempt: document.attempt };
    case 'failed': {
      // A new attempt: the bytes again (removed when it failed), kept under the next attempt number (a late run of
      // the failed attempt removes only its own), the record queued with it, which is also its queue message's id,
      // so the new message is not taken for a duplicate of the old.
      const parts = await services.uploads.put(
        document.documentId,
        document.attempt + 1,
        prepared.upload.content,
      );
      const { failure: _failure, ...rest } = document;
      const retried: KnowledgeDocument = {
        ...rest,
        title: prepared.title.text,
        titleGiven: prepared.title.given,
        ...(prepared.upload.fileName !== undefined ? { fileName: prepared.upload.fileName } : {}),
        format: prepared.format,
        mediaType: prepared.mediaType,
        parts,
        status: 'queued',
        attempt: document.attempt + 1,
        updatedAt: prepared.now(),
      };
      if ((await services.documents.replace(retried, version)) === 'conflict') return 'conflict';
      await queueIngestion(services.publisher, retried);
      return { status: 202, document: documentView(retried, caller.userId) };
    }
  }
}

/** The bytes of each document the user uploaded (private and shared), those being deleted aside, by id. */
async function ownedBytes(documents: KnowledgeDocuments, userId: string): Promise<Map<string, number>> {
  const owned = new Map<string, number>();
  for (const library of [privateLibrary(userId), SHARED_LIBRARY]) {
    let continuationToken: string | undefined;
    do {
      const page = await documents.list(library, {
        ownerId: userId,
        limit: OWNED_BYTES_PAGE,
        ...(continuationToken === undefined ? {} : { continuationToken }),
      });
      for (const document of page.documents) owned.set(document.documentId, document.bytes);
      continuationToken = page.continuationToken;
    } while (continuationToken !== undefined);
  }
  return owned;
}

const OWNED_BYTES_PAGE = 100;

async function queueIngestion(publisher: MessagePublisher, document: KnowledgeDocument): Promise<void> {
  const message: IngestDocumentMessage = {
    library: document.library,
    documentId: document.documentId,
    attempt: document.attempt,
  };
  await publisher.publish(KNOWLEDGE_INGEST_QUEUE, { body: message, messageId: ingestMessageId(document) });
}

/** A document's id: the first 32 hex characters of SHA-256 over its library and its content's hash. */
export function documentIdFor(library: string, contentHash: string): string {
  return createHash('sha256').update(`${library}\n${contentHash}`).digest('hex').slice(0, 32);
}

/** Checks what can be checked without reading the content as its format; the format and the type stored. */
export function checkUpload(
  upload: DocumentUpload,
  maxDocumentBytes: number,
): { format: DocumentFormat; mediaType: string } {
  if (upload.content.byteLength === 0)
    throw new ValidationError('The document is empty: send a file with some text in it.');
  if (upload.content.byteLength > maxDocumentBytes) throw new DocumentTooLargeError(maxDocumentBytes);
  const format = formatOf(upload.contentType, upload.fileName);
  if (format === 'pdf') {
    if (!startsAsPdf(upload.content))
      throw new UnsupportedDocumentTypeError(
        'The document is not a PDF: its content does not start with the PDF header (%PDF-).',
      );
  } else {
    let text: string;
    try {
      text = new TextDecoder('utf-8', { fatal: true }).decode(upload.content);
    } catch {
      throw new ValidationError(
        `The document is not valid UTF-8 text: save it as UTF-8 and upload it again (as ${format}).`,
      );
    }
    if (text.trim() === '') throw new ValidationError('The document has no text: it is blank.');
  }
  return { format, mediaType: DOCUMENT_MEDIA_TYPES[format][0] as string };
}

/**
 * The format from the content type (its parameters, such as the charset, aside); from the file name's extension
 * when there is no type or only the generic application/octet-stream; and a .md file sent as text/plain is
 * Markdown (Markdown is plain text, and some clients know no better type for it).
 */
export function formatOf(contentType: string | undefined, fileName: string | undefined): DocumentFormat {
  const mediaType = contentType?.split(';')[0]?.trim().toLowerCase() ?? '';
  const byExtension = formatOfFileName(fileName);
  if (mediaType !== '' && mediaType !== 'application/octet-stream') {
    const byType = (Object.keys(DOCUMENT_MEDIA_TYPES) as DocumentFormat[]).find((format) =>
      DOCUMENT_MEDIA_TYPES[format].includes(mediaType),
    );
    if (byType === 'text' && byExtension === 'markdown') return 'markdown';
    if (byType !== undefined) return byType;
    throw new UnsupportedDocumentTypeError(
      `Documents of type ${mediaType} are not supported: upload ${SUPPORTED_TYPES}.`,
    );
  }
  if (byExtension !== undefined) return byExtension;
  throw new UnsupportedDocumentTypeError(
    fileName === undefined
      ? `The document's type is unknown: give its contentType (or a file name with its extension); supported: ${SUPPORTED_TYPES}.`
      : `The type of ${fileName} is not supported: upload ${SUPPORTED_TYPES}.`,
  );
}

function formatOfFileName(fileName: string | undefined): DocumentFormat | undefined {
  const dot = fileName?.lastIndexOf('.') ?? -1;
  if (fileName === undefined || dot < 0) return undefined;
  const extension = fileName.slice(dot).toLowerCase();
  return (Object.keys(DOCUMENT_EXTENSIONS) as DocumentFormat[]).find((format) =>
    DOCUMENT_EXTENSIONS[format].includes(extension),
  );
}

function startsAsPdf(content: Uint8Array): boolean {
  const head = Buffer.from(content.subarray(0, PDF_HEADER_WINDOW)).toString('latin1');
  return head.includes('%PDF-');
}

/** The uploader's title, else the file name's stem, else a placeholder the worker replaces. */
function titleOf(upload: DocumentUpload): { text: string; given: boolean } {
  if (upload.title !== undefined) return { text: upload.title.slice(0, MAX_TITLE_CHARS), given: true };
  // The schema has cleaned the file name already; cleaning again after the cut drops half a surrogate pair.
  const stem = cleanDisplayText(upload.fileName?.replace(/\.[^.]*$/, '').slice(0, MAX_TITLE_CHARS) ?? '');
  if (stem !== '') return { text: stem, given: true };
  return { text: UNTITLED_DOCUMENT, given: false };
}

// --- The request body, as JSON or as a form -----------------------------------------------------------------

/**
 * The most bytes an upload's request body may have: a JSON body's base64 is a third larger than the document,
 * plus room for the other fields (or a form's part headers).
 */
export function uploadBodyLimit(maxDocumentBytes: number): number {
  return Math.ceil(maxDocumentBytes / 3) * 4 + 64 * 1024;
}

const BASE64 = /^[A-Za-z0-9+/_-]*={0,2}$/;

/**
 * The upload as the endpoint parses it: JSON with the content in base64 (uploadDocumentJsonSchema), or a form's
 * fields with its file's bytes as `content`.
 */
export const documentUploadBodySchema: z.ZodType<DocumentUpload> = z
  .object({
    ...uploadDocumentJsonSchema.shape,
    contentBase64: uploadDocumentJsonSchema.shape.contentBase64.optional(),
    /** Only a form gives it (a JSON body cannot hold a Uint8Array). */
    content: z.instanceof(Uint8Array).optional(),
  })
  .transform((body, context): DocumentUpload => {
    const fields = {
      ...(body.title !== undefined ? { title: body.title } : {}),
      ...(body.fileName !== undefined ? { fileName: body.fileName } : {}),
      ...(body.contentType !== undefined ? { contentType: body.contentType } : {}),
    };
    if (body.content !== undefined) return { ...fields, content: body.content };
    const encoded = body.contentBase64?.replace(/\s+/g, '');
    if (encoded === undefined || encoded === '' || !BASE64.test(encoded) || encoded.length % 4 === 1) {
      context.addIssue({
        code: 'custom',
        path: ['contentBase64'],
        message:
          encoded === undefined || encoded === ''
            ? 'is missing: send the document in base64 (or upload it as multipart/form-data)'
            : 'is not valid base64',
      });
      return z.NEVER;
    }
    return { ...fields, content: new Uint8Array(Buffer.from(encoded, 'base64')) };
  });
