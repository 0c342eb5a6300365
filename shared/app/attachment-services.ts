// Attachments composed once: the Blob container and direct uploads (the app's identity in Azure, the emulator's token
// locally), the image encoder, the limits and the quota's shared leases; deleting a conversation deletes its files.
import type { Agent } from 'node:https';
import type { TokenCredential } from '@azure/identity';
import {
  createAttachmentBlobClients,
  createBlobAttachmentStore,
} from '../attachments/adapters/blob-attachment-store.js';
import { createBlobAttachmentUploads } from '../attachments/adapters/blob-attachment-uploads.js';
import { createBlobPassageVectors } from '../attachments/adapters/blob-passage-vectors.js';
import type { PassageVectorStore } from '../attachments/passage-vectors.js';
import { createBlobSasSigner } from '../attachments/adapters/blob-sas-signer.js';
import type { AttachmentUploads } from '../attachments/attachment-uploads.js';
import type { DirectUploadServices } from '../attachments/direct-uploads.js';
import { sharpImages } from '../attachments/adapters/sharp-images.js';
import type { AttachmentStore } from '../attachments/attachment-store.js';
import { withAttachments } from '../attachments/model-attachments.js';
import type { ChatMessage, LlmGateway } from '../llm/llm-gateway.js';
import type { AttachmentServices } from '../attachments/store-attachment.js';
import { paragraphChunker } from '../attachments/attachment-passages.js';
import { chunkDocument } from '../knowledge/chunking.js';
import type { DocumentReader } from '../knowledge/extract-pool.js';
import type { ConversationEraser } from '../history/conversation-eraser.js';
import type { QuotaState } from '../quota/quota-state.js';
import type { AppConfig } from './config.js';
import { configuredModels } from './usage-accounting.js';

/** What the platform gives for Blob Storage beside its credential. */
export interface BlobPlatform {
  /**
   * Local runtime only: the emulator's token credential, an agent that trusts its certificate, and where a browser
   * reaches the account (the runtime's proxy to the emulator, on its own origin).
   */
  localBlob?: { credential: TokenCredential; agent: Agent; publicEndpoint?: string };
}

export function composeAttachments(
  config: AppConfig,
  platform: BlobPlatform & { credential: TokenCredential },
  leases: QuotaState,
): DirectUploadServices & { passageVectors: PassageVectorStore } {
  const blob = config.attachments.blob;
  const local = platform.localBlob;
  const clients =
    blob === undefined
      ? undefined
      : createAttachmentBlobClients(blob, local?.credential ?? platform.credential, local?.agent);
  return {
    store: clients === undefined ? offStore : createBlobAttachmentStore(clients.container),
    uploads:
      clients === undefined
        ? offUploads
        : createBlobAttachmentUploads(
            createBlobSasSigner(clients.service, { publicEndpoint: local?.publicEndpoint }),
            clients.container,
          ),
    passageVectors: clients === undefined ? offVectors : createBlobPassageVectors(clients.container),
    images: sharpImages,
    config: config.attachments,
    quota: config.quota,
    leases,
  };
}

/**
 * How a turn reads its files in: a PDF by the workers that read knowledge documents, under their limits; a file too
 * long for the prompt cut by the knowledge base's chunker and searched by words and embeddings, as knowledge is.
 */
export function turnAttachments(
  attachments: AttachmentServices & { passageVectors: PassageVectorStore },
  reader: DocumentReader,
  config: Pick<AppConfig, 'knowledge' | 'llm'>,
  llm: Pick<LlmGateway, 'embed'>,
): (userId: string, messages: readonly ChatMessage[]) => Promise<ChatMessage[]> {
  const { knowledge } = config;
  const reading = {
    store: attachments.store,
    config: attachments.config,
    // A file too long for the prompt is cut as knowledge documents are, then searched.
    chunk: (text: string) =>
      chunkDocument(
        {
          pageCount: 1,
          blocks: paragraphChunker(text).map((paragraph) => ({ kind: 'text' as const, text: paragraph })),
        },
        { targetTokens: knowledge.chunkTokens, overlapTokens: knowledge.chunkOverlapTokens },
      ).map((chunk) => chunk.text),
    readPdf: async (bytes: Uint8Array, owner: string) => {
      const document = await reader.read({ format: 'pdf', content: bytes, owner });
      return document.blocks.map((block) => block.text).join('\n\n');
    },
    // Within the knowledge base's limits: its batch per embeddings request, its most chunks per document. Inside a
    // round, the calls are counted to the turn as a knowledge search's are.
    embedding: {
      llm,
      vectors: attachments.passageVectors,
      model: configuredModels(config.llm).embedding,
      batch: knowledge.embeddingBatch,
      maxPassages: knowledge.maxChunks,
      log: console,
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

/** Attachments off: no upload begins (startUpload refuses first), and there is nothing to sweep. */
const offUploads: AttachmentUploads = {
  open: () => Promise.reject(new Error('Attachments are off: ATTACHMENTS_BLOB_ENDPOINT is not set.')),
  find: () => Promise.resolve(undefined),
  read: () => Promise.reject(new Error('Attachments are off: ATTACHMENTS_BLOB_ENDPOINT is not set.')),
  drop: () => Promise.resolve(),
  sweep: () => Promise.resolve({ uploads: 0, unattached: 0 }),
};

/** Attachments off: there are no files to make embeddings of. */
const offVectors: PassageVectorStore = {
  read: () => Promise.resolve(undefined),
  write: () => Promise.resolve(),
};

/** Attachments off (no Blob endpoint): nothing is kept, so nothing is found and nothing to delete. */
const offStore: AttachmentStore = {
  put: () => Promise.reject(new Error('Attachments are off: ATTACHMENTS_BLOB_ENDPOINT is not set.')),
  find: () => Promise.resolve(undefined),
  read: () => Promise.resolve(undefined),
  findSent: () => Promise.resolve(undefined),
  link: () => Promise.resolve(),
  list: () => Promise.resolve([]),
  usedBytes: () => Promise.resolve(0),
  delete: () => Promise.resolve(),
  deleteConversation: () => Promise.resolve(0),
  deleteUser: () => Promise.resolve(0),
};
