// Settings of the knowledge base (KNOWLEDGE_*): the largest document accepted, how documents are cut into chunks,
// how many texts go to the embeddings endpoint per request, and who fills the shared library.
import { defineSettings, intSetting, textSetting, type SettingValues } from '../settings/setting.js';

const tuning = { kind: 'default' } as const;

/** The default upload limit: 10 MiB of document (a JSON upload's base64 is a third larger). */
export const DEFAULT_MAX_DOCUMENT_BYTES = 10 * 1024 * 1024;

/** The largest request body the Azure Functions host accepts (100 MB): a larger one never reaches the app. */
export const HOST_REQUEST_BODY_BYTES = 100 * 1024 * 1024;

/**
 * The most KNOWLEDGE_MAX_DOCUMENT_BYTES may be: 74 MiB, whose JSON upload body (base64, a third larger, plus room
 * for the other fields: uploadBodyLimit) still fits in HOST_REQUEST_BODY_BYTES. A larger limit would promise
 * documents the host refuses.
 */
export const MAX_DOCUMENT_BYTES_LIMIT = 74 * 1024 * 1024;

export const knowledgeSettings = defineSettings({
  KNOWLEDGE_MAX_DOCUMENT_BYTES: intSetting({
    default: DEFAULT_MAX_DOCUMENT_BYTES,
    min: 1,
    max: MAX_DOCUMENT_BYTES_LIMIT,
    help:
      'Largest document accepted, in bytes (larger uploads get 413). At most 74 MiB (77594624): a JSON upload ' +
      'sends the document in base64, a third larger, and the Functions host refuses request bodies over 100 MB.',
    azure: tuning,
  }),
  KNOWLEDGE_CHUNK_TOKENS: intSetting({
    default: 400,
    min: 50,
    max: 4_000,
    help: 'Estimated tokens a chunk aims at: paragraphs are gathered under their heading up to it; a longer paragraph is cut at sentences.',
    azure: tuning,
  }),
  KNOWLEDGE_CHUNK_OVERLAP_TOKENS: intSetting({
    default: 60,
    min: 0,
    max: 1_000,
    help: 'Estimated tokens of the end of a chunk repeated at the start of the next within one section (whole sentences).',
    azure: tuning,
  }),
  KNOWLEDGE_MAX_CHUNKS: intSetting({
    default: 10_000,
    min: 1,
    help: 'Most chunks one document may make; a document that makes more fails with the reason.',
    azure: tuning,
  }),
  KNOWLEDGE_EMBEDDING_BATCH: intSetting({
    default: 64,
    min: 1,
    max: 2_048,
    help: 'Chunks embedded per embeddings request (the endpoint takes at most 2,048 inputs per request).',
    azure: tuning,
  }),
  KNOWLEDGE_SHARED_LIBRARY: textSetting({
    default: '',
    sample: 'user_003',
    help:
      'Who fills the shared library every user can search: user ids and `group:<id>` entries (an Entra ID group ' +
      "in the caller's `groups` claim), comma-separated. Their uploads go to the shared library; everyone else's " +
      'stay private. Empty: no shared library.',
    azure: tuning,
  }),
});

export interface KnowledgeConfig {
  maxDocumentBytes: number;
  chunkTokens: number;
  chunkOverlapTokens: number;
  maxChunks: number;
  embeddingBatch: number;
  sharedLibrary: { users: string[]; groups: string[] };
}

export function knowledgeConfig(values: SettingValues<typeof knowledgeSettings>): KnowledgeConfig {
  const entries = values.KNOWLEDGE_SHARED_LIBRARY.split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '');
  return {
    maxDocumentBytes: values.KNOWLEDGE_MAX_DOCUMENT_BYTES,
    chunkTokens: values.KNOWLEDGE_CHUNK_TOKENS,
    chunkOverlapTokens: Math.min(
      values.KNOWLEDGE_CHUNK_OVERLAP_TOKENS,
      Math.floor(values.KNOWLEDGE_CHUNK_TOKENS / 2),
    ),
    maxChunks: values.KNOWLEDGE_MAX_CHUNKS,
    embeddingBatch: values.KNOWLEDGE_EMBEDDING_BATCH,
    sharedLibrary: {
      users: entries.filter((entry) => !entry.startsWith('group:')),
      groups: entries
        .filter((entry) => entry.startsWith('group:'))
        .map((entry) => entry.slice('group:'.length)),
    },
  };
}
