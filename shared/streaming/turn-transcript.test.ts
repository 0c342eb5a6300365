// What a client following the protocol shows: `discard` voids a crashed attempt's streamed output.
import { describe, expect, it } from 'vitest';
import type { ChatEvent, ChatEventBody } from './contracts.js';
import { answerText, discardRange, keptEvents, shownSources } from './turn-transcript.js';

const ids = { sessionId: 's', chatMessageId: 'm' };
const events = (...bodies: ChatEventBody[]): ChatEvent[] =>
  bodies.map((body, i) => ({ ...body, ...ids, seq: i + 1 }));

describe('the turn transcript', () => {
  const crashed = events(
    { type: 'message-start', userMessageId: 'u', assistantMessageId: 'a' },
    { type: 'reasoning-delta', delta: 'hmm' },
    { type: 'reasoning-end' },
    { type: 'content', delta: 'The su' },
    { type: 'discard', fromSeq: 2, toSeq: 4 },
    { type: 'content', delta: 'The sum ' },
    { type: 'content', delta: 'is 5.' },
    { type: 'message-end', finishReason: 'stop' },
  );

  it('drops the voided events and keeps the rest', () => {
    expect(keptEvents(crashed).map((e) => e.seq)).toEqual([1, 5, 6, 7, 8]);
    expect(answerText(crashed)).toBe('The sum is 5.');
  });

  it('voids from the first to the last discardable event an attempt left, once', () => {
    expect(discardRange(crashed.slice(1, 4))).toEqual({ fromSeq: 2, toSeq: 4 });
    // A second crash after the discard: only what came after it is voided anew.
    expect(discardRange(crashed.slice(1, 6))).toEqual({ fromSeq: 6, toSeq: 6 });
    expect(discardRange(crashed.slice(0, 1))).toBeUndefined();
  });

  it('never voids a tool result or the end of the stream', () => {
    const withTool = events(
      { type: 'tool-result', round: 0, toolCallId: 'c', name: 't', result: 'r', isError: false },
      { type: 'content', delta: 'x' },
      { type: 'discard', fromSeq: 1, toSeq: 2 },
    );
    expect(keptEvents(withTool).map((e) => e.type)).toEqual(['tool-result', 'discard']);
  });

  it('never voids the sources, and shows those of the last sources event', () => {
    const source = (chunkId: string) => ({
      chunkId,
      documentId: 'a'.repeat(32),
      title: 'T',
      citation: 'T',
      excerpt: 'x',
      score: 1,
    });
    const withSources = events(
      { type: 'sources', sources: [source('a')] },
      { type: 'content', delta: 'x' },
      { type: 'sources', sources: [source('a'), source('b')] },
      { type: 'discard', fromSeq: 1, toSeq: 3 },
    );
    expect(keptEvents(withSources).map((e) => e.type)).toEqual(['sources', 'sources', 'discard']);
    expect(shownSources(withSources).map((s) => s.chunkId)).toEqual(['a', 'b']);
    expect(shownSources(crashed)).toEqual([]);
  });
});
