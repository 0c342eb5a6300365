// What a share keeps of a message, and how a long conversation's snapshot is cut into bounded chunks.
import { describe, expect, it } from 'vitest';
import { SHARE_CHUNK_BYTES, SHARE_MAX_BYTES, type SharedMessage } from './contracts.js';
import { chunkMessages, sharedMessageBytes, ShareTooLargeError } from './snapshot.js';

const message = (index: number, chars: number): SharedMessage => ({
  role: index % 2 === 0 ? 'user' : 'assistant',
  content: `${index} ${'é'.repeat(chars)}`,
  timestamp: '2026-11-22T10:00:00.000Z',
});

/** Cosmos DB's limit on one item. */
const COSMOS_ITEM_BYTES = 2 * 1024 * 1024;

describe('a share snapshot in chunks', () => {
  it('cuts a 10,000-message conversation into chunks far below the item limit, in order', () => {
    const messages = Array.from({ length: 10_000 }, (_, index) => message(index, 100));
    const chunks = chunkMessages(messages);
    expect(chunks.length).toBeGreaterThan(1);
    for (const chunk of chunks) {
      const bytes = Buffer.byteLength(JSON.stringify({ messages: chunk }), 'utf8');
      expect(bytes).toBeLessThanOrEqual(SHARE_CHUNK_BYTES + 64);
      expect(bytes).toBeLessThan(COSMOS_ITEM_BYTES);
    }
    expect(chunks.flat()).toEqual(messages);
  });

  it('refuses a snapshot past the whole limit with 413', () => {
    // 10,000 messages of about 2 KiB (two-byte characters): about 20 MiB.
    const messages = Array.from({ length: 10_000 }, (_, index) => message(index, 1_000));
    expect(messages.reduce((sum, m) => sum + sharedMessageBytes(m), 0)).toBeGreaterThan(SHARE_MAX_BYTES);
    expect(() => chunkMessages(messages)).toThrow(ShareTooLargeError);
    expect(() => chunkMessages(messages)).toThrow(
      expect.objectContaining({ status: 413, code: 'share_too_large' }),
    );
  });

  it('puts a message larger than a chunk alone in its own', () => {
    const big = message(1, SHARE_CHUNK_BYTES);
    const chunks = chunkMessages([message(0, 10), big, message(2, 10)]);
    expect(chunks.map((chunk) => chunk.length)).toEqual([1, 1, 1]);
  });
});
