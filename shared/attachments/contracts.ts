// Attachments' HTTP contract: the upload (a form's `file`, or JSON with base64), what an upload answers, and the
// path of one attachment.
import { z } from 'zod';
import { attachmentIdSchema, messageAttachmentSchema } from '../message-attachments.js';

/** A file as a client sent it. */
export interface IncomingFile {
  name: string;
  /** The client's word on the type: used only to tell text formats apart. */
  declaredType?: string | undefined;
  bytes: Uint8Array;
}

/** A form's or a JSON body's file, as the upload endpoint reads it. */
export const attachmentUploadSchema: z.ZodType<IncomingFile> = z
  .object({
    name: z.string({ error: 'must be a string' }).trim().min(1).max(255).optional(),
    mediaType: z.string({ error: 'must be a string' }).max(100).optional(),
    contentBase64: z.base64({ error: 'must be base64' }).optional(),
    /** Only a form gives it. */
    content: z.instanceof(Uint8Array).optional(),
  })
  .transform((body, context): IncomingFile => {
    const bytes =
      body.content ??
      (body.contentBase64 === undefined ? undefined : Buffer.from(body.contentBase64, 'base64'));
    if (bytes === undefined) {
      context.addIssue({
        code: 'custom',
        path: ['contentBase64'],
        message: 'is required: send the file as contentBase64, or as the `file` part of a form',
      });
      return z.NEVER;
    }
    return { name: body.name ?? 'file', declaredType: body.mediaType, bytes };
  });

/** The largest upload body: a file of `maxFileBytes` in base64 (a third larger), and room for the other fields. */
export function attachmentBodyLimit(maxFileBytes: number): number {
  return Math.ceil(maxFileBytes / 3) * 4 + 64 * 1024;
}

export const attachmentAnswerSchema = messageAttachmentSchema.extend({
  attachmentId: attachmentIdSchema,
  sha256: z.string(),
});

export const attachmentParamsSchema = z.object({ attachmentId: attachmentIdSchema });

/** A direct upload's request: what the client says of the file it is about to write. */
export const uploadRequestSchema = z.object({
  filename: z.string({ error: 'must be a string' }).trim().min(1).max(255),
  mediaType: z.string({ error: 'must be a string' }).max(100).optional(),
  size: z.number({ error: 'must be a number' }).int().positive(),
});

export const uploadAnswerSchema = z.object({
  attachmentId: attachmentIdSchema,
  /** PUT the file here (header x-ms-blob-type: BlockBlob); it can create and write this one blob, nothing else. */
  uploadUrl: z.string(),
  expiresOn: z.string(),
});
