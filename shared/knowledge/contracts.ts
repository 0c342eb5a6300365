// The knowledge area's contracts: the containers of the knowledge base, its queue and the message on it, the stored
// documents, chunks and upload parts, the HTTP bodies of its API, and the citations (`sources`) that a chat turn
// streams and keeps. Documents live in a library: a user's private one, or the shared one every user can search.
import { z } from 'zod';
import { displayFileName, displayTextSchema } from '../plain-text.js';
import { EMBEDDING, englishText, type ContainerSpec } from '../cosmos/container-spec.js';
import { documentIdSchema } from '../ids.js';
import { pagesSchema } from '../conversation/sources.js';

// Not `knowledge-documents` and `knowledge-chunks`: those ids were declared before with other partition keys
// (/ownerId; /ownerId, /documentId), and an environment deployed then holds them so; a container's partition key
// cannot be changed, so containers keyed by library take new ids.
export const KNOWLEDGE_DOCUMENTS_CONTAINER = 'knowledge-library-documents';
export const KNOWLEDGE_CHUNKS_CONTAINER = 'knowledge-library-chunks';
export const KNOWLEDGE_UPLOADS_CONTAINER = 'knowledge-uploads';

/** The queue of documents to ingest (not a session queue: documents are independent). */
export const KNOWLEDGE_INGEST_QUEUE = 'knowledge-documents';

/** How long an upload's bytes wait for the worker before Cosmos DB removes them (a week; they go once indexed). */
export const UPLOAD_TTL_SECONDS = 7 * 24 * 60 * 60;

export const knowledgeContainers: readonly ContainerSpec[] = [
  {
    id: KNOWLEDGE_DOCUMENTS_CONTAINER,
    partitionKeyPaths: ['/library'],
    purpose:
      "Knowledge base: one item per document (title, format, status, counts) in its library's partition: a user's private library or the shared one.",
  },
  {
    id: KNOWLEDGE_CHUNKS_CONTAINER,
    partitionKeyPaths: ['/library', '/documentId'],
    vectorEmbeddings: [EMBEDDING],
    vectorIndexes: [{ path: EMBEDDING.path, type: 'diskANN' }],
    fullTextPaths: [englishText('/text')],
    purpose:
      "Knowledge base: the chunks of each document with their embeddings, keyed by library then document (a document's chunks are one logical partition, removed together); searched across a caller's libraries by vector and full text (hybrid RRF), with citations.",
  },
  {
    id: KNOWLEDGE_UPLOADS_CONTAINER,
    partitionKeyPaths: ['/documentId'],
    defaultTtlSeconds: UPLOAD_TTL_SECONDS,
    unindexedPaths: ['/content'],
    purpose:
      'Knowledge base: the bytes of an uploaded document (base64 parts of at most 1 MiB) until the ingestion worker has indexed it; removed then, or after a week.',
  },
];

// --- Libraries --------------------------------------------------------------------------------------------------

/** The shared library: documents every user can search (uploaded by the users or group KNOWLEDGE_SHARED_LIBRARY names). */
export const SHARED_LIBRARY = 'shared';

/** A user's private library: their own documents, which only they can see, search and delete. */
export function privateLibrary(userId: string): string {
  return `private:${userId}`;
}

/** Who pays for a library's ingestion: a private library's user; the shared library is counted as itself. */
export function libraryOwner(library: string): string {
  return library.startsWith('private:') ? library.slice('private:'.length) : library;
}

/** The libraries a user's searches read: their own and the shared one. */
export function searchableLibraries(userId: string): string[] {
  return [privateLibrary(userId), SHARED_LIBRARY];
}

/** What the API calls a library: the caller's own (`private`) or the shared one (`shared`). */
export const libraryNameSchema = z.enum(['private', 'shared']);
export type LibraryName = z.infer<typeof libraryNameSchema>;

// --- Documents --------------------------------------------------------------------------------------------------

/**
 * A document's id (its format is in shared/ids.ts): 32 lowercase hex characters, the first half of SHA-256 over its
 * library and its content's hash (documentIdFor), so the same content uploaded again to the same library is the same
 * document.
 */
export { documentIdSchema };

/** The formats the knowledge base reads. */
export const documentFormatSchema = z.enum(['markdown', 'text', 'html', 'pdf']);
export type DocumentFormat = z.infer<typeof documentFormatSchema>;

/** The media types each format is uploaded as (the first is the one a document is stored with). */
export const DOCUMENT_MEDIA_TYPES: Readonly<Record<DocumentFormat, readonly string[]>> = {
  markdown: ['text/markdown', 'text/x-markdown'],
  text: ['text/plain'],
  html: ['text/html', 'application/xhtml+xml'],
  pdf: ['application/pdf'],
};

/** The file name extensions each format is recognised by, when the media type does not say. */
export const DOCUMENT_EXTENSIONS: Readonly<Record<DocumentFormat, readonly string[]>> = {
  markdown: ['.md', '.markdown'],
  text: ['.txt', '.text'],
  html: ['.html', '.htm', '.xhtml'],
  pdf: ['.pdf'],
};

/**
 * queued: accepted, waiting for the worker; processing: being extracted, chunked and embedded; ready: searchable;
 * failed: not searchable, with the reason (nothing of it is indexed); deleting: being removed (not searchable, not
 * listed). Only `ready` documents are ever searched.
 */
export const documentStatusSchema = z.enum(['queued', 'processing', 'ready', 'failed', 'deleting']);
export type DocumentStatus = z.infer<typeof documentStatusSchema>;

export const MAX_TITLE_CHARS = 200;
export const MAX_FILE_NAME_CHARS = 255;

/** Why a document failed: a stable code and a sentence for the user. */
export const documentFailureSchema = z.object({
  /** `unreadable` (corrupt or unsupported content), `empty` (no text), `too_large` (too many chunks), `embedding_failed`. */
  code: z.string(),
  reason: z.string(),
});
export type DocumentFailure = z.infer<typeof documentFailureSchema>;

/** The stored document (container KNOWLEDGE_DOCUMENTS_CONTAINER, partition `library`, id = documentId). */
export const knowledgeDocumentSchema = z.object({
  id: z.string(),
  kind: z.literal('knowledge-document'),
  library: z.string(),
  documentId: documentIdSchema,
  /** The user who uploaded it: the only one who may delete it. */
  ownerId: z.string(),
  title: z.string().max(MAX_TITLE_CHARS),
  /**
   * Whether the uploader named it (a title, or a file name whose stem is the title); if not, the worker replaces
   * the placeholder title with the one the content gives itself, or its first line.
   */
  titleGiven: z.boolean(),
  fileName: z.string().max(MAX_FILE_NAME_CHARS).optional(),
  format: documentFormatSchema,
  mediaType: z.string(),
  /** SHA-256 of the content, hex. */
  contentHash: z.string(),
  bytes: z.number().int().nonnegative(),
  /** How many upload parts hold the content (KnowledgeUploads). */
  parts: z.number().int().nonnegative(),
  status: documentStatusSchema,
  /** 1 for the first ingestion; one more each time a failed document is uploaded again (the queue message's id). */
  attempt: z.number().int().min(1),
  createdAt: z.iso.datetime(),
  updatedAt: z.iso.datetime(),
  /** Set once ready: the pages (PDF) or 1, the chunks stored, the characters of text extracted. */
  pageCount: z.number().int().nonnegative().optional(),
  chunkCount: z.number().int().nonnegative().optional(),
  characters: z.number().int().nonnegative().optional(),
  /** Set once ready: the embeddings requests the ingestion made (batches of KNOWLEDGE_EMBEDDING_BATCH texts). */
  embeddingRequests: z.number().int().nonnegative().optional(),
  failure: documentFailureSchema.optional(),
});
export type KnowledgeDocument = z.infer<typeof knowledgeDocumentSchema>;

/** A document as the API shows it. */
export const documentViewSchema = z.object({
  documentId: documentIdSchema,
  title: z.string(),
  fileName: z.string().optional(),
  format: documentFormatSchema,
  bytes: z.number().int().nonnegative(),
  status: documentStatusSchema,
  library: libraryNameSchema,
  /** Whether the caller uploaded it (and so may delete it). */
  ownedByYou: z.boolean(),
  createdAt: z.iso.datetime(),
  updatedAt: z.iso.datetime(),
  pageCount: z.number().int().nonnegative().optional(),
  chunkCount: z.number().int().nonnegative().optional(),
  failure: documentFailureSchema.optional(),
});
export type DocumentView = z.infer<typeof documentViewSchema>;

// --- Chunks -----------------------------------------------------------------------------------------------------

/**
 * The longest heading a chunk keeps (cut at a word, with an ellipsis): a heading is what a citation names, and a
 * line taken for one (a PDF's, say) may run on.
 */
export const MAX_HEADING_CHARS = 200;

/** A chunk as the chunker makes it, before it is embedded. */
export const chunkDraftSchema = z.object({
  /** 0, 1, 2, ... in reading order. */
  index: z.number().int().nonnegative(),
  text: z.string().min(1),
  /** The headings it sits under, outermost first (empty before the first heading). */
  headings: z.array(z.string()),
  pages: pagesSchema.optional(),
  /** Its estimated tokens (the same estimate prompts are budgeted with). */
  tokens: z.number().int().nonnegative(),
});
export type ChunkDraft = z.infer<typeof chunkDraftSchema>;

/** The id of a chunk: its document and its index. */
export function chunkId(documentId: string, index: number): string {
  return `${documentId}.${index}`;
}

/** The stored chunk (container KNOWLEDGE_CHUNKS_CONTAINER, partition [library, documentId], id = chunkId). */
export const knowledgeChunkSchema = chunkDraftSchema.extend({
  id: z.string(),
  kind: z.literal('knowledge-chunk'),
  library: z.string(),
  documentId: documentIdSchema,
  /** The document's title, kept with each chunk for its citation. */
  title: z.string(),
  embedding: z.array(z.number()),
});
export type KnowledgeChunk = z.infer<typeof knowledgeChunkSchema>;

/** A stored chunk without its embedding: what search gives back. */
export type ChunkView = Omit<KnowledgeChunk, 'embedding'>;

// --- Uploads ----------------------------------------------------------------------------------------------------

/** Raw bytes per upload part (base64 makes 1.33 MiB of it, well under Cosmos DB's 2 MB per item). */
export const UPLOAD_PART_BYTES = 1024 * 1024;

/** An upload part's id: its document, the document's attempt the bytes were uploaded for, and its number. */
export function uploadPartId(documentId: string, attempt: number, part: number): string {
  return `${documentId}.${attempt}.${part}`;
}

/** An upload part (container `knowledge-uploads`, partition documentId, id = uploadPartId). */
export const uploadPartSchema = z.object({
  id: z.string(),
  kind: z.literal('knowledge-upload'),
  documentId: z.string(),
  attempt: z.number().int().min(1),
  part: z.number().int().nonnegative(),
  /** base64 */
  content: z.string(),
  ttl: z.number().int().positive().optional(),
});
export type UploadPart = z.infer<typeof uploadPartSchema>;

// --- The ingestion queue ----------------------------------------------------------------------------------------

/** On KNOWLEDGE_INGEST_QUEUE; its Service Bus message id is ingestMessageId (duplicates are dropped). */
export const ingestDocumentMessageSchema = z.object({
  library: z.string().min(1),
  documentId: documentIdSchema,
  attempt: z.number().int().min(1),
});
export type IngestDocumentMessage = z.infer<typeof ingestDocumentMessageSchema>;

/**
 * The ingestion message's id: the document, its attempt and when its record was created. Publishing one attempt
 * again is a duplicate Service Bus drops; the same content uploaded again after a delete is a new record (attempt 1
 * again, a later createdAt), whose message must not be taken for the deleted one's.
 */
export function ingestMessageId(
  document: Pick<KnowledgeDocument, 'documentId' | 'attempt' | 'createdAt'>,
): string {
  return `${document.documentId}.${document.attempt}.${Date.parse(document.createdAt)}`;
}

/**
 * The usage job of one ingestion: its record's creation and attempt, so an upload again after a delete (attempt 1
 * again) is a job of its own, while a redelivery of the same message is the same job, counted once.
 */
export function ingestionJob(
  document: Pick<KnowledgeDocument, 'documentId' | 'attempt' | 'createdAt'>,
): string {
  return `ingest:${ingestMessageId(document)}`;
}

// --- HTTP -------------------------------------------------------------------------------------------------------

/**
 * POST /api/knowledge/documents as JSON (multipart/form-data gives the same fields: a `file` part, whose name and
 * type stand for fileName and contentType, and an optional `title` field). The format comes from contentType,
 * else from fileName's extension, and a PDF must start as one.
 */
export const uploadDocumentJsonSchema = z.object({
  /** Shown as it is: refused (400) when it holds what cannot be shown safely (displayTextProblem). */
  title: displayTextSchema(MAX_TITLE_CHARS).optional(),
  /** Cleaned instead (displayFileName): its path and unsafe characters removed, as a client's name is not chosen. */
  fileName: z
    .string()
    .transform(displayFileName)
    .pipe(
      z
        .string()
        .min(1, 'has no name once its path and control characters are removed')
        .max(MAX_FILE_NAME_CHARS),
    )
    .optional(),
  contentType: z.string().trim().min(1).max(255).optional(),
  contentBase64: z.string().min(1, 'is empty: send the document'),
});

/** What the upload use-case is given, however the body came. */
export interface DocumentUpload {
  title?: string;
  fileName?: string;
  contentType?: string;
  content: Uint8Array;
}

/** 202 (a new or re-queued document) or 200 (the same content was already uploaded); also GET .../{documentId}. */
export const uploadAnswerSchema = z.object({ document: documentViewSchema });

export const documentParamsSchema = z.object({ documentId: documentIdSchema });

export const DEFAULT_DOCUMENT_PAGE = 50;
export const MAX_DOCUMENT_PAGE = 200;

/** GET /api/knowledge/documents?library=private|shared&limit=&continuationToken= */
export const listDocumentsQuerySchema = z.object({
  library: libraryNameSchema.default('private'),
  limit: z.coerce.number().int().min(1).max(MAX_DOCUMENT_PAGE).default(DEFAULT_DOCUMENT_PAGE),
  continuationToken: z.string().min(1).max(4_096).optional(),
});

export const DEFAULT_KNOWLEDGE_SEARCH_LIMIT = 5;
export const MAX_KNOWLEDGE_SEARCH_LIMIT = 20;
export const MAX_KNOWLEDGE_QUERY_CHARS = 1_000;

export const knowledgeQuerySchema = z
  .string()
  .trim()
  .min(1, 'is empty: say what to look for')
  .max(MAX_KNOWLEDGE_QUERY_CHARS);

/** POST /api/knowledge/search */
export const knowledgeSearchBodySchema = z.object({
  query: knowledgeQuerySchema,
  limit: z.number().int().min(1).max(MAX_KNOWLEDGE_SEARCH_LIMIT).default(DEFAULT_KNOWLEDGE_SEARCH_LIMIT),
});

/** One search result: a chunk with what it is cited by. */
export const knowledgeSearchHitSchema = z.object({
  chunkId: z.string(),
  documentId: documentIdSchema,
  title: z.string(),
  /** The headings it sits under, outermost first; `heading` is the innermost. */
  headings: z.array(z.string()),
  heading: z.string().optional(),
  pages: pagesSchema.optional(),
  text: z.string(),
  library: libraryNameSchema,
  /** Fused rank score (RRF): higher is better, comparable within one result list only. */
  score: z.number(),
  /** Cosine similarity of the query's embedding to the chunk's. */
  similarity: z.number(),
  /** How an answer cites it: the title and its page(s), e.g. "Employee Handbook, p. 4" (citationOf). */
  citation: z.string(),
});
export type KnowledgeSearchHit = z.infer<typeof knowledgeSearchHitSchema>;

/** POST /api/knowledge/search's answer. */
export const knowledgeSearchResultsSchema = z.object({ results: z.array(knowledgeSearchHitSchema) });

/** GET /api/knowledge/documents: a page of documents. */
export const documentPageSchema = z.object({
  documents: z.array(documentViewSchema),
  /** Present when there are more: pass it back as ?continuationToken= (with the same library). */
  continuationToken: z.string().optional(),
});

// --- Citations in a chat turn (seeds 003 and 004) ---------------------------------------------------------------

/** The tool the model searches the knowledge base with. */
export const SEARCH_KNOWLEDGE_BASE_TOOL = 'search_knowledge_base';
