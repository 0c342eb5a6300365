// The knowledge base's entries: upload, list, read and delete documents, hybrid search with citations, and
// the ingestion worker on the knowledge-documents queue, which settles each document ready or failed.
import type { InvocationContext } from '@azure/functions';
import { z } from 'zod';
import { getApp } from '../shared/app/app.js';
import { formFile, formText } from '../shared/http/upload-body.js';
import {
  documentPageSchema,
  documentParamsSchema,
  ingestDocumentMessageSchema,
  ingestionJob,
  KNOWLEDGE_INGEST_QUEUE,
  knowledgeSearchBodySchema,
  knowledgeSearchResultsSchema,
  listDocumentsQuerySchema,
  SHARED_LIBRARY,
  uploadAnswerSchema,
  type KnowledgeDocument,
} from '../shared/knowledge/contracts.js';
import { deleteDocument } from '../shared/knowledge/delete-document.js';
import { ingestDocument } from '../shared/knowledge/ingest-document.js';
import { getDocument, listDocuments } from '../shared/knowledge/knowledge-api.js';
import { searchKnowledge } from '../shared/knowledge/search-knowledge.js';
import {
  documentUploadBodySchema,
  uploadBodyLimit,
  uploadDocument,
} from '../shared/knowledge/upload-document.js';
import { parseInput } from '../shared/validation.js';
import { ValidationError } from '../shared/errors.js';
import { meteredSearch } from '../shared/usage/metered-search.js';
import { withUsage } from '../shared/usage/usage-scope.js';
import type { FunctionDefinition } from './definition.js';
import { endpoint, httpFunction } from './endpoint.js';
import { deliveryCount } from './service-bus-delivery.js';

const documentLocation = (documentId: string) => `/api/knowledge/documents/${documentId}`;

/** The parts uploadFromForm reads, for the OpenAPI document. */
const uploadFormParts = z.object({
  file: z.file().describe('the document: Markdown, text, HTML or PDF'),
  title: z.string().optional().describe("the document's title; default: its file name's stem"),
});

/** A form upload as the body schema reads it: the `file` part (its name and type) and an optional `title`. */
async function uploadFromForm(form: FormData): Promise<unknown> {
  const file = await formFile(form, 'file');
  if (file === undefined)
    throw new ValidationError('The form has no `file` part: send the document as the part named file.');
  const title = formText(form, 'title');
  return { ...file, ...(title !== undefined ? { title } : {}) };
}

export const uploadDocumentEndpoint = endpoint({
  name: 'uploadDocument',
  route: 'knowledge/documents',
  methods: ['POST'],
  summary:
    'Uploads a Markdown, text, HTML or PDF document (JSON {title?, fileName?, contentType?, contentBase64}, or multipart/form-data with a `file` part and an optional `title`; at most KNOWLEDGE_MAX_DOCUMENT_BYTES): 202 {document} while it is indexed, 200 when the same content is already ready.',
  auth: 'caller',
  responses: {
    200: 'the same content is already ready: {document}',
    202: 'stored and queued for indexing: {document}, its URL in Location',
    409: 'another request is changing the same document (with retry-after)',
    429: 'new content past QUOTA_KNOWLEDGE_BYTES (limit, allowed, current; retry-after): nothing was stored',
  },
  replies: { 200: uploadAnswerSchema, 202: uploadAnswerSchema },
  body: {
    schema: documentUploadBodySchema,
    maxBytes: (app) => uploadBodyLimit(app.config.knowledge.maxDocumentBytes),
    what: 'document upload',
    multipart: uploadFromForm,
    formParts: uploadFormParts,
  },
  async handle({ app, caller, body }) {
    const result = await uploadDocument({ ...app.knowledge, quota: app.quota }, caller, body);
    return {
      status: result.status,
      body: { document: result.document } satisfies z.input<typeof uploadAnswerSchema>,
      headers: { location: documentLocation(result.document.documentId) },
    };
  },
});

export const listDocumentsEndpoint = endpoint({
  name: 'listDocuments',
  route: 'knowledge/documents',
  methods: ['GET'],
  summary:
    "The caller's documents (?library=private, the default) or the shared library's (?library=shared), newest first, with their status (queued, processing, ready, failed with the reason) and chunk count: ?limit, ?continuationToken.",
  auth: 'caller',
  responses: { 200: '{documents, continuationToken?}' },
  replies: { 200: documentPageSchema },
  query: listDocumentsQuerySchema,
  async handle({ app, caller, query }) {
    return { status: 200, body: await listDocuments(app.knowledge.documents, caller.userId, query) };
  },
});

export const getDocumentEndpoint = endpoint({
  name: 'getDocument',
  route: 'knowledge/documents/{documentId}',
  methods: ['GET'],
  summary:
    "One document of the caller's or of the shared library, with its status: 404 for another user's private document.",
  auth: 'caller',
  responses: { 200: '{document}', 404: "an unknown document, or another user's private one" },
  replies: { 200: uploadAnswerSchema },
  params: documentParamsSchema,
  async handle({ app, caller, params }) {
    return {
      status: 200,
      body: {
        document: await getDocument(app.knowledge.documents, caller.userId, params.documentId),
      } satisfies z.input<typeof uploadAnswerSchema>,
    };
  },
});

export const deleteDocumentEndpoint = endpoint({
  name: 'deleteDocument',
  route: 'knowledge/documents/{documentId}',
  methods: ['DELETE'],
  summary:
    "Deletes a document the caller uploaded, with every chunk at once (gone from search as the call returns): 204; 404 for another user's private document, 403 for another user's shared one.",
  auth: 'caller',
  responses: {
    204: 'the document and its chunks are gone',
    403: 'a shared document another user uploaded',
    404: "an unknown document, or another user's private one",
    409: 'the document is changing right now (with retry-after)',
  },
  params: documentParamsSchema,
  async handle({ app, caller, params, context }) {
    const outcome = await deleteDocument(app.knowledge, caller.userId, params.documentId);
    context.log(
      `Deleted document ${params.documentId} of ${outcome.library} with ${outcome.chunksRemoved} chunks.`,
    );
    return { status: 204 };
  },
});

export const searchKnowledgeEndpoint = endpoint({
  name: 'searchKnowledge',
  route: 'knowledge/search',
  methods: ['POST'],
  summary:
    "Hybrid search {query, limit} over the caller's documents and the shared library's (ready ones): each result's text, title, heading, page(s), score and citation.",
  auth: 'caller',
  responses: {
    200: '{results}',
    429: "the day's tokens or the month's cost spent, or QUOTA_SEARCHES_PER_MINUTE reached (limit, retry-after)",
  },
  replies: { 200: knowledgeSearchResultsSchema },
  body: { schema: knowledgeSearchBodySchema, maxBytes: 16 * 1024, what: 'search' },
  async handle({ app, caller, body, context }) {
    const results = await meteredSearch(app.quota, caller, context, () =>
      searchKnowledge(app.knowledge.search, caller.userId, body.query, body.limit),
    );
    return { status: 200, body: { results } satisfies z.input<typeof knowledgeSearchResultsSchema> };
  },
});

export async function knowledgeWorker(message: unknown, context: InvocationContext): Promise<void> {
  // A malformed message throws: it is redelivered and then dead-lettered with the reason, never dropped.
  const ingest = parseInput(ingestDocumentMessageSchema, message, 'ingest-document message');
  const { knowledge } = await getApp();
  // The document's embeddings are counted to its uploader (a shared-library document's too, with the library
  // noted), once per ingestion: a document uploaded again after its delete is a new ingestion.
  const accountFor = <T>(document: KnowledgeDocument, work: () => Promise<T>) =>
    withUsage(
      {
        userId: document.ownerId,
        job: ingestionJob(document),
        kind: 'ingestion',
        ...(document.library === SHARED_LIBRARY ? { library: document.library } : {}),
        log: context,
      },
      work,
    );
  await ingestDocument({ ...knowledge, accountFor }, ingest, context, {
    deliveryCount: deliveryCount(context),
  });
}

export const knowledgeFunctions: FunctionDefinition[] = [
  httpFunction(uploadDocumentEndpoint),
  httpFunction(listDocumentsEndpoint),
  httpFunction(getDocumentEndpoint),
  httpFunction(deleteDocumentEndpoint),
  httpFunction(searchKnowledgeEndpoint),
  {
    kind: 'serviceBus',
    name: 'knowledgeWorker',
    source: { queueName: KNOWLEDGE_INGEST_QUEUE },
    isSessionsEnabled: false,
    handler: knowledgeWorker,
  },
];
