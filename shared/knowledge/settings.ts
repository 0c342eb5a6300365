// Settings of the knowledge base (KNOWLEDGE_*): the largest document accepted, the budgets of the workers that read
// documents, how documents are cut into chunks, how many texts go to the embeddings endpoint per request, and who
// fills the shared library.
import {
  defineSettings,
  intSetting,
  readSettings,
  SettingProblems,
  settingsOf,
  textSetting,
  type Environment,
  type SettingValues,
} from '../settings/setting.js';
import type { ReadingBudget } from './document-text.js';

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
  KNOWLEDGE_READ_WORKERS: intSetting({
    default: 2,
    min: 1,
    max: 32,
    help:
      'Worker threads that read documents, one document each. One user takes at most all of them but one, so ' +
      "from 2 on another user's document never waits behind theirs (with 1, documents simply queue).",
    azure: tuning,
  }),
  KNOWLEDGE_READ_TIMEOUT_MS: intSetting({
    default: 120_000,
    min: 50,
    help:
      'Wall time one document may take to read, counted from when a worker starts on it (not while it waits); ' +
      'a document that takes longer fails with the reason and its worker is replaced.',
    azure: tuning,
  }),
  KNOWLEDGE_READ_MEMORY_MB: intSetting({
    default: 512,
    min: 128,
    max: 16_384,
    help:
      'JavaScript heap of each reading worker, in MB (the readers themselves take about 100): a document that ' +
      'needs more fails with the reason.',
    azure: tuning,
  }),
  KNOWLEDGE_MAX_INFLATED_MB: intSetting({
    default: 128,
    min: 1,
    max: 4_096,
    help: "Most bytes, in MB, a PDF's compressed streams may expand to: a PDF that expands beyond fails with the reason.",
    azure: tuning,
  }),
  KNOWLEDGE_MAX_TEXT_CHARACTERS: intSetting({
    default: 16_000_000,
    min: 1,
    max: 1_000_000_000,
    help: 'Most characters of text one document may hold; a document that holds more fails with the reason.',
    azure: tuning,
  }),
  KNOWLEDGE_MAX_NESTING: intSetting({
    default: 256,
    min: 8,
    max: 1_000,
    help:
      'Deepest nesting of Markdown quotes and lists or HTML elements a document may have; a document nested ' +
      'deeper fails as too deeply nested.',
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
  reading: ReadingBudget;
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
    reading: {
      workers: values.KNOWLEDGE_READ_WORKERS,
      timeoutMs: values.KNOWLEDGE_READ_TIMEOUT_MS,
      memoryMb: values.KNOWLEDGE_READ_MEMORY_MB,
      limits: {
        maxInflatedBytes: values.KNOWLEDGE_MAX_INFLATED_MB * 1024 * 1024,
        maxCharacters: values.KNOWLEDGE_MAX_TEXT_CHARACTERS,
        maxNesting: values.KNOWLEDGE_MAX_NESTING,
      },
    },
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

/** The reading budget that KNOWLEDGE_* settings give, the defaults for those unset (tests, benchmarks). */
export function readingBudget(env: Environment = {}): ReadingBudget {
  const problems = new SettingProblems(settingsOf(knowledgeSettings));
  const values = readSettings(knowledgeSettings, env, problems);
  problems.throwIfAny();
  return knowledgeConfig(values).reading;
}
