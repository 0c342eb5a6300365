// How the sink cuts a batch into Web PubSub messages: one message per batch, in seq order, unless the batch is
// larger than one message may be.
import { describe, expect, it } from 'vitest';
import type { ChatEvent } from '../contracts.js';
import { messagesOf } from './web-pubsub-event-sink.js';

const content = (seq: number, delta: string): ChatEvent => ({
  type: 'content',
  sessionId: 's',
  chatMessageId: 't',
  seq,
  delta,
});

describe('messagesOf', () => {
  it('sends a batch as one message, and nothing for an empty batch', () => {
    const batch = [content(1, 'a'), content(2, 'b'), content(3, 'c')];
    expect(messagesOf(batch, 1_000_000)).toEqual([batch]);
    expect(messagesOf([], 1_000_000)).toEqual([]);
  });

  it('splits a batch too large for one message, in order, each part within the limit as JSON', () => {
    const batch = Array.from({ length: 10 }, (_, i) => content(i + 1, 'x'.repeat(100)));
    const limit = 450;
    const messages = messagesOf(batch, limit);
    expect(messages.flat()).toEqual(batch);
    expect(messages.length).toBeGreaterThan(1);
    for (const message of messages)
      expect(Buffer.byteLength(JSON.stringify(message))).toBeLessThanOrEqual(limit);
    // An event larger than the limit on its own still goes out (the service then decides), alone.
    expect(messagesOf([content(1, 'y'.repeat(500)), content(2, 'z')], limit)).toHaveLength(2);
  });
});
