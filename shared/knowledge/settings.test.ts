// The knowledge base's settings: the document size limit may not exceed what the Functions host lets a JSON upload
// carry, and the rows parse into the config the use-cases read.
import { describe, expect, it } from 'vitest';
import {
  DEFAULT_MAX_DOCUMENT_BYTES,
  HOST_REQUEST_BODY_BYTES,
  knowledgeConfig,
  knowledgeSettings,
  MAX_DOCUMENT_BYTES_LIMIT,
} from './settings.js';
import { uploadBodyLimit } from './upload-document.js';

const maxDocumentBytes = knowledgeSettings.KNOWLEDGE_MAX_DOCUMENT_BYTES.schema;

describe('KNOWLEDGE_MAX_DOCUMENT_BYTES', () => {
  it("is at most what a JSON upload's body can carry under the host's 100 MB request limit", () => {
    expect(maxDocumentBytes.safeParse(String(MAX_DOCUMENT_BYTES_LIMIT)).success).toBe(true);
    expect(maxDocumentBytes.safeParse(String(MAX_DOCUMENT_BYTES_LIMIT + 1)).success).toBe(false);
    expect(uploadBodyLimit(MAX_DOCUMENT_BYTES_LIMIT)).toBeLessThanOrEqual(HOST_REQUEST_BODY_BYTES);
    expect(uploadBodyLimit(DEFAULT_MAX_DOCUMENT_BYTES)).toBeLessThanOrEqual(HOST_REQUEST_BODY_BYTES);
    expect(knowledgeSettings.KNOWLEDGE_MAX_DOCUMENT_BYTES.help).toMatch(/74 MiB/);
  });

  it('defaults to 10 MiB', () => {
    expect(maxDocumentBytes.parse(undefined)).toBe(DEFAULT_MAX_DOCUMENT_BYTES);
    expect(
      knowledgeConfig({
        KNOWLEDGE_MAX_DOCUMENT_BYTES: 5,
        KNOWLEDGE_READ_WORKERS: 2,
        KNOWLEDGE_READ_TIMEOUT_MS: 120_000,
        KNOWLEDGE_READ_MEMORY_MB: 512,
        KNOWLEDGE_MAX_INFLATED_MB: 128,
        KNOWLEDGE_MAX_TEXT_CHARACTERS: 16_000_000,
        KNOWLEDGE_MAX_NESTING: 256,
        KNOWLEDGE_CHUNK_TOKENS: 400,
        KNOWLEDGE_CHUNK_OVERLAP_TOKENS: 60,
        KNOWLEDGE_MAX_CHUNKS: 10,
        KNOWLEDGE_EMBEDDING_BATCH: 64,
        KNOWLEDGE_SHARED_LIBRARY: 'user_003, group:librarians',
      }),
    ).toMatchObject({ maxDocumentBytes: 5, sharedLibrary: { users: ['user_003'], groups: ['librarians'] } });
  });
});
