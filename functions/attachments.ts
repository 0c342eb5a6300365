// Files attached to messages: the rules an upload meets, upload one (checked and stored whole, or refused with the
// rule it breaks), and read one back, for its owner only.
import { z } from 'zod';
import {
  attachmentAnswerSchema,
  attachmentBodyLimit,
  attachmentParamsSchema,
  attachmentUploadSchema,
} from '../shared/attachments/contracts.js';
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
    const stored = await storeAttachment(app.attachments, caller, body);
    const { sessionId: _sessionId, ...shown } = stored;
    return {
      status: 201,
      body: { attachmentId: stored.id, ...shown } satisfies z.input<typeof attachmentAnswerSchema>,
      headers: { location: `/api/attachments/${stored.id}` },
    };
  },
});

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
  httpFunction(getAttachmentEndpoint),
];
