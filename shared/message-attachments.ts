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

/** The characters of a file's text a prompt counts as one token when it fits files to their budget. */
export const ATTACHMENT_CHARS_PER_TOKEN = 4;

/** What stands for an image in a turn too old to show it again. */
export function imageCaption(attachment: MessageAttachment): string {
  return `[Image ${attachmentLabel(attachment)} was attached here; it is no longer shown.]`;
}

/** A text or PDF file as its text (or the part of it that fits) goes into the prompt. */
export function inlinedFile(attachment: Pick<MessageAttachment, 'name' | 'mediaType'>, text: string): string {
  return `<attachment name="${attachment.name.replace(/"/g, "'")}" type="${attachment.mediaType}">\n${text}\n</attachment>`;
}

/** A file as the prompt names it: its name, type and, for an image, its size in pixels. */
export function attachmentLabel(attachment: MessageAttachment): string {
  const size = attachment.width === undefined ? '' : `, ${attachment.width}×${attachment.height}`;
  return `'${attachment.name}' (${attachment.mediaType}${size})`;
}
