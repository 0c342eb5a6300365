// The attachments a new message names, checked before its turn is queued: each the caller's own (404 otherwise),
// within the count and bytes a message may carry, and images only for a model that sees them; then tied to the
// conversation, so deleting it deletes them.
import { NotFoundError } from '../errors.js';
import { isImageAttachment, type MessageAttachment } from '../message-attachments.js';
import type { AttachmentStore } from './attachment-store.js';
import { AttachmentRefusedError } from './errors.js';
import type { AttachmentConfig } from './settings.js';

/** Whether the model the turn runs on takes images, asked only when the message carries one. */
export type ModelVision = () => Promise<{ model: string; sees: boolean }>;

export async function attachToMessage(
  services: { store: AttachmentStore; config: AttachmentConfig },
  userId: string,
  sessionId: string,
  attachmentIds: readonly string[],
  modelVision?: ModelVision,
): Promise<MessageAttachment[]> {
  const { config } = services;
  const ids = [...new Set(attachmentIds)];
  if (ids.length === 0) return [];
  if (config.blob === undefined)
    throw new AttachmentRefusedError(
      'attachments_off',
      'Attachments are off: ATTACHMENTS_BLOB_ENDPOINT names no Blob Storage account.',
    );
  if (ids.length > config.maxPerMessage)
    throw new AttachmentRefusedError(
      'attachments_per_message',
      `This message carries ${ids.length} attachments: a message may carry at most ${config.maxPerMessage} (ATTACHMENTS_MAX_PER_MESSAGE).`,
    );
  const found = await Promise.all(ids.map((id) => services.store.find(userId, id)));
  const attachments: MessageAttachment[] = found.map((attachment, index) => {
    if (attachment === undefined) throw new NotFoundError(`No attachment '${ids[index]}' for this user.`);
    const { sha256: _sha256, sessionId: _sessionId, ...kept } = attachment;
    return kept;
  });
  const bytes = attachments.reduce((sum, attachment) => sum + attachment.size, 0);
  if (bytes > config.maxMessageBytes)
    throw new AttachmentRefusedError(
      'attachments_message_bytes',
      `This message's attachments are ${bytes} bytes: a message may carry at most ${config.maxMessageBytes} (ATTACHMENTS_MAX_MESSAGE_BYTES).`,
    );
  if (attachments.some(isImageAttachment)) {
    // The catalogue's model, when LLM_MODELS lists them, says for itself; else LLM_VISION for the one model.
    const vision = modelVision === undefined ? undefined : await modelVision();
    if (vision !== undefined && !vision.sees)
      throw new AttachmentRefusedError(
        'model_without_vision',
        `Model '${vision.model}' does not take images (its LLM_MODELS entry has no vision capability): choose a model that does, or send the message without them.`,
      );
    if (vision === undefined && !config.vision)
      throw new AttachmentRefusedError(
        'model_without_vision',
        'The chat model does not take images (LLM_VISION=off): send the message without them.',
      );
  }
  await services.store.link(userId, ids, sessionId);
  return attachments;
}
