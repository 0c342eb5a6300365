// What a client is told of the checks an upload meets (GET /api/attachment-rules), so a composer can refuse a file
// when it is picked rather than when the message is sent. The server checks every file again whatever it says.
import { z } from 'zod';
import type { AttachmentConfig } from './settings.js';

export const attachmentRulesSchema = z.object({
  /** False when no Blob Storage is configured: every file is refused (attachments_off). */
  enabled: z.boolean(),
  /** Media types a message may carry, as sniffed from the bytes; a text type also covers source code. */
  types: z.array(z.string()),
  maxFileBytes: z.number().int().positive(),
  /** A larger file goes straight to Blob Storage: POST /api/attachments/uploads, a PUT, then /complete. */
  directUploadBytes: z.number().int().positive(),
  maxPerMessage: z.number().int().positive(),
  maxMessageBytes: z.number().int().positive(),
  maxPixels: z.number().int().positive(),
  /** False when the model takes no images (LLM_VISION=off): a message with an image is refused. */
  vision: z.boolean(),
});
export type AttachmentRules = z.infer<typeof attachmentRulesSchema>;

export function attachmentRules(config: AttachmentConfig): AttachmentRules {
  return {
    enabled: config.blob !== undefined,
    types: [...config.types],
    maxFileBytes: config.maxFileBytes,
    directUploadBytes: config.directUploadBytes,
    maxPerMessage: config.maxPerMessage,
    maxMessageBytes: config.maxMessageBytes,
    maxPixels: config.maxPixels,
    vision: config.vision,
  };
}
