// What a message keeps of each file attached to it: the attachment's id and what a client shows of it, never a
// signed URL (one expires and breaks an old conversation). Every area that carries a message uses this one shape.
import { z } from 'zod';
import { idSchema } from './ids.js';

export const attachmentIdSchema = idSchema('attachmentId');

export const messageAttachmentSchema = z.object({
  id: attachmentIdSchema,
  /** The file's name as the client gave it (shown, never used as a path). */
  name: z.string().min(1).max(255),
  /** The type sniffed from the bytes when the file was stored. */
  mediaType: z.string().min(1).max(100),
  /** Bytes stored (an image's, after re-encoding). */
  size: z.number().int().nonnegative(),
  width: z.number().int().positive().optional(),
  height: z.number().int().positive().optional(),
});
export type MessageAttachment = z.infer<typeof messageAttachmentSchema>;

/** Whether the model sees it as an image (the other types reach it as text). */
export function isImageAttachment(attachment: Pick<MessageAttachment, 'mediaType'>): boolean {
  return attachment.mediaType.startsWith('image/');
}
