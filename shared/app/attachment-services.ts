// Attachments composed once: the Blob container (the app's identity in Azure, Azurite's key locally), the image
// encoder, the limits and the quota's shared leases; and deleting a conversation deletes its files.
import type { TokenCredential } from '@azure/identity';
import {
  createAttachmentContainer,
  createBlobAttachmentStore,
} from '../attachments/adapters/blob-attachment-store.js';
import { sharpImages } from '../attachments/adapters/sharp-images.js';
import type { AttachmentStore } from '../attachments/attachment-store.js';
import { withAttachments } from '../attachments/model-attachments.js';
import type { ChatMessage } from '../llm/llm-gateway.js';
import type { AttachmentServices } from '../attachments/store-attachment.js';
import type { DocumentReader } from '../knowledge/extract-pool.js';
import type { ConversationEraser } from '../history/conversation-eraser.js';
import type { QuotaState } from '../quota/quota-state.js';
import type { AppConfig } from './config.js';

export function composeAttachments(
  config: AppConfig,
  credential: TokenCredential,
  leases: QuotaState,
): AttachmentServices {
  const blob = config.attachments.blob;
  return {
    store:
      blob === undefined ? offStore : createBlobAttachmentStore(createAttachmentContainer(blob, credential)),
    images: sharpImages,
    config: config.attachments,
    quota: config.quota,
    leases,
  };
}

/** How a turn reads its files in: a PDF by the workers that read knowledge documents, under their limits. */
export function turnAttachments(
  attachments: AttachmentServices,
  reader: DocumentReader,
): (userId: string, messages: readonly ChatMessage[]) => Promise<ChatMessage[]> {
  const reading = {
    store: attachments.store,
    config: attachments.config,
    readPdf: async (bytes: Uint8Array, owner: string) => {
      const document = await reader.read({ format: 'pdf', content: bytes, owner });
      return document.blocks.map((block) => block.text).join('\n\n');
    },
  };
  return (userId, messages) => withAttachments(reading, userId, messages);
}

/** The eraser that also deletes the conversation's attachments, with its posted records. */
export function erasingAttachments(eraser: ConversationEraser, store: AttachmentStore): ConversationEraser {
  return {
    postedMessageIds: (userId, sessionId) => eraser.postedMessageIds(userId, sessionId),
    eraseTurnData: (sessionId) => eraser.eraseTurnData(sessionId),
    async erasePosted(userId, sessionId) {
      await store.deleteConversation(userId, sessionId);
      return eraser.erasePosted(userId, sessionId);
    },
  };
}

/** Attachments off (no Blob endpoint): nothing is kept, so nothing is found and nothing to delete. */
const offStore: AttachmentStore = {
  put: () => Promise.reject(new Error('Attachments are off: ATTACHMENTS_BLOB_ENDPOINT is not set.')),
  find: () => Promise.resolve(undefined),
  read: () => Promise.resolve(undefined),
  link: () => Promise.resolve(),
  list: () => Promise.resolve([]),
  usedBytes: () => Promise.resolve(0),
  delete: () => Promise.resolve(),
  deleteConversation: () => Promise.resolve(0),
  deleteUser: () => Promise.resolve(0),
};
