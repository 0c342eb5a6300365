// Files attached to messages: the rules an upload meets, upload one (in the request, or straight to Blob Storage and
// then completed: checked and stored whole, or refused with the rule it breaks), read one back for its owner only,
// and the sweep of uploads never completed and files never attached.
import type { InvocationContext, Timer } from '@azure/functions';
import { z } from 'zod';
import {
  attachmentAnswerSchema,
  attachmentBodyLimit,
  attachmentParamsSchema,
  attachmentUploadSchema,
  uploadAnswerSchema,
  uploadRequestSchema,
} from '../shared/attachments/contracts.js';
import { completeUpload, startUpload, sweepAttachments } from '../shared/attachments/direct-uploads.js';
import type { StoredFile } from '../shared/attachments/store-attachment.js';
import { getApp } from '../shared/app/app.js';
import { attachmentRules, attachmentRulesSchema } from '../shared/attachments/rules.js';
import { storeAttachment } from '../shared/attachments/store-attachment.js';
import { NotFoundError, ValidationError } from '../shared/errors.js';
import { formFile } from '../shared/http/upload-body.js';
import type { FunctionDefinition } from './definition.js';
import { endpoint, httpFunction } from './endpoint.js';

const uploadFormParts = z.object({ file: z.file().describe('the file: an image, a PDF or text') });

async function uploadFromForm(form: FormData): Promise<unknown> {
  const file = await formFile(form, 'file');
  if (file === undefined)
    throw new ValidationError('The form has no `file` part: send the file as the part named file.');
  return {
    content: file.content,
    ...(file.fileName === undefined ? {} : { name: file.fileName }),
    ...(file.contentType === undefined ? {} : { mediaType: file.contentType }),
  };
}

export const uploadAttachmentEndpoint = endpoint({
  name: 'uploadAttachment',
  route: 'attachments',
  methods: ['POST'],
  summary:
    'Stores a file to attach to a message (multipart/form-data with a `file` part, or JSON {name, mediaType?, contentBase64}): 201 {attachmentId, name, mediaType, size, width?, height?}. Then send `attachments: [attachmentId]` with POST /api/chat.',
  auth: 'caller',
  responses: {
    201: 'stored: {attachmentId, ...}, its URL in Location',
    413: 'attachment_too_large (ATTACHMENTS_MAX_FILE_BYTES) or attachment_pixels (ATTACHMENTS_MAX_PIXELS, read from the header before decoding)',
    415: 'attachment_type: the type read from the bytes is not in ATTACHMENTS_TYPES',
    429: 'QUOTA_ATTACHMENT_BYTES: nothing was stored',
    503: 'attachments_off: no Blob Storage configured',
  },
  replies: { 201: attachmentAnswerSchema },
  body: {
    schema: attachmentUploadSchema,
    maxBytes: (app) => attachmentBodyLimit(app.config.attachments.maxFileBytes),
    what: 'attachment upload',
    multipart: uploadFromForm,
    formParts: uploadFormParts,
  },
  async handle({ app, caller, body }) {
    return storedAnswer(await storeAttachment(app.attachments, caller, body));
  },
});

/** 201 with what a client shows of the file, or 200 when the same bytes were kept already (that file). */
function storedAnswer(stored: StoredFile) {
  const { sessionId: _sessionId, sourceSha256: _source, reused, ...shown } = stored;
  return {
    status: reused ? 200 : 201,
    body: { attachmentId: stored.id, ...shown } satisfies z.input<typeof attachmentAnswerSchema>,
    headers: { location: `/api/attachments/${stored.id}` },
  };
}

export const startUploadEndpoint = endpoint({
  name: 'startAttachmentUpload',
  route: 'attachments/uploads',
  methods: ['POST'],
  summary:
    'Begins a direct upload of a large file: {filename, mediaType?, size} → 201 {attachmentId, uploadUrl, expiresOn}. PUT the file to uploadUrl (x-ms-blob-type: BlockBlob; a write-only URL for that one blob, valid ATTACHMENTS_UPLOAD_MINUTES), then POST /api/attachments/{attachmentId}/complete.',
  auth: 'caller',
  responses: {
    201: '{attachmentId, uploadUrl, expiresOn}',
    413: 'attachment_too_large: the announced size is over ATTACHMENTS_MAX_FILE_BYTES',
    429: 'QUOTA_ATTACHMENT_BYTES',
    503: 'attachments_off: no Blob Storage configured',
  },
  replies: { 201: uploadAnswerSchema },
  body: { schema: uploadRequestSchema, maxBytes: 4 * 1024, what: 'upload request' },
  async handle({ app, caller, body }) {
    const started = await startUpload(app.attachments, caller, body);
    return {
      status: 201,
      body: {
        attachmentId: started.attachmentId,
        uploadUrl: started.uploadUrl,
        expiresOn: started.expiresOn.toISOString(),
      } satisfies z.input<typeof uploadAnswerSchema>,
    };
  },
});

export const completeUploadEndpoint = endpoint({
  name: 'completeAttachmentUpload',
  route: 'attachments/{attachmentId}/complete',
  methods: ['POST'],
  summary:
    'Completes a direct upload: the uploaded bytes meet the checks of every way in (type read from the bytes, size, pixels, re-encoding, quota) and become the attachment (201), or are refused with the rule and deleted. The same bytes already kept give that file (200, its id). Again after success: the attachment (200).',
  auth: 'caller',
  responses: {
    200: 'the same bytes were kept already: that attachment (use its attachmentId)',
    201: 'stored: {attachmentId, name, mediaType, size, width?, height?, sha256}',
    404: "an unknown upload, or another user's",
    409: 'upload_incomplete: nothing was uploaded yet',
    413: 'attachment_too_large or attachment_pixels: the upload is deleted',
    415: 'attachment_type: the upload is deleted',
    429: 'QUOTA_ATTACHMENT_BYTES: the upload is deleted',
  },
  replies: { 200: attachmentAnswerSchema, 201: attachmentAnswerSchema },
  params: attachmentParamsSchema,
  async handle({ app, caller, params }) {
    return storedAnswer(await completeUpload(app.attachments, caller, params.attachmentId));
  },
});

/** Deletes direct uploads never completed and files never attached to a message. */
export async function sweepAttachmentsTimer(_timer: Timer, context: InvocationContext): Promise<void> {
  const { attachments } = await getApp();
  const swept = await sweepAttachments(attachments);
  if (swept.uploads + swept.unattached > 0)
    context.log(
      `Swept ${swept.uploads} upload(s) never completed, ${swept.unattached} file(s) never attached`,
    );
}

export const getAttachmentEndpoint = endpoint({
  name: 'getAttachment',
  route: 'attachments/{attachmentId}',
  methods: ['GET'],
  summary:
    "The bytes of one of the caller's attachments, with its type (the page shows an image through a blob: URL, since an <img> cannot send a token): 404 for anyone else's.",
  auth: 'caller',
  responses: { 200: 'the bytes', 404: "an unknown attachment, or another user's" },
  replies: { 200: { content: { 'application/octet-stream': z.string() } } },
  params: attachmentParamsSchema,
  async handle({ app, caller, params }) {
    const found = await app.attachments.store.read(caller.userId, params.attachmentId);
    if (found === undefined) throw new NotFoundError(`No attachment '${params.attachmentId}' for this user.`);
    const { attachment, bytes } = found;
    const image = attachment.mediaType.startsWith('image/');
    return {
      status: 200,
      stream: new Blob([new Uint8Array(bytes)]).stream(),
      headers: {
        'content-type': attachment.mediaType,
        'content-length': String(bytes.length),
        // Never run as a page of this origin, whatever it holds; a file that is not an image is downloaded.
        'x-content-type-options': 'nosniff',
        'content-security-policy': "default-src 'none'; sandbox",
        'content-disposition': `${image ? 'inline' : 'attachment'}; filename*=UTF-8''${encodeURIComponent(attachment.name)}`,
        'cache-control': 'private, max-age=3600, immutable',
        etag: `"${attachment.sha256}"`,
      },
    };
  },
});

export const attachmentRulesEndpoint = endpoint({
  name: 'attachmentRules',
  route: 'attachment-rules',
  methods: ['GET'],
  summary:
    'The checks an upload meets here (types, sizes, files a message may carry, whether images reach the model), so a client can refuse a file when it is picked. The server checks every file again.',
  auth: 'caller',
  responses: { 200: '{enabled, types, maxFileBytes, maxPerMessage, maxMessageBytes, maxPixels, vision}' },
  replies: { 200: attachmentRulesSchema },
  handle({ app }) {
    return Promise.resolve({
      status: 200,
      body: attachmentRules(app.config.attachments),
      // The same until the deployment's settings change.
      headers: { 'cache-control': 'private, max-age=300' },
    });
  },
});

export const attachmentFunctions: FunctionDefinition[] = [
  httpFunction(attachmentRulesEndpoint),
  httpFunction(uploadAttachmentEndpoint),
  httpFunction(startUploadEndpoint),
  httpFunction(completeUploadEndpoint),
  httpFunction(getAttachmentEndpoint),
  {
    kind: 'timer',
    name: 'sweepAttachments',
    schedule: '0 */15 * * * *',
    localIntervalMs: 15 * 60_000,
    handler: sweepAttachmentsTimer,
  },
];
