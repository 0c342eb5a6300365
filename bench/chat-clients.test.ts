// How the bench clients assemble a turn: single events or arrays per message, de-duplication by seq, and
// `discard` dropping already-shown text.
import { describe, expect, it } from 'vitest';
import { eventsOf, TurnTrace } from './chat-clients.js';

const content = (seq: number, delta: string) => ({ type: 'content', chatMessageId: 'm', seq, delta });

describe('eventsOf', () => {
  it('reads one event, an array of events, or their JSON text, and skips what is not an event', () => {
    expect(eventsOf(content(1, 'a'))).toHaveLength(1);
    expect(eventsOf([content(1, 'a'), content(2, 'b'), { nonsense: true }])).toHaveLength(2);
    expect(eventsOf(JSON.stringify([content(1, 'a')]))).toHaveLength(1);
    expect(eventsOf('not json')).toEqual([]);
  });
});

describe('TurnTrace', () => {
  it('assembles text in seq order, drops repeated seqs, and honours discard', () => {
    const trace = new TurnTrace();
    const events = eventsOf([
      { type: 'message-start', chatMessageId: 'm', seq: 0 },
      content(1, 'Hello '),
      content(2, 'wrong '),
      content(2, 'wrong '),
      { type: 'discard', chatMessageId: 'm', seq: 3, fromSeq: 2, toSeq: 2 },
      content(5, 'there'),
      content(4, 'out '),
      { type: 'message-end', chatMessageId: 'm', seq: 6, usage: { completionTokens: 3 } },
    ]);
    events.forEach((event, i) => trace.record(event, i));
    expect(trace.text).toBe('Hello out there');
    expect(trace.wordArrivals).toEqual([1, 6, 5]);
    expect(trace.repeatedEvents).toBe(1);
    expect(trace.discardedEvents).toBe(1);
    expect(trace.starts).toBe(1);
    expect(trace.ends).toBe(1);
    expect(trace.firstContentAt).toBe(1);
    expect(trace.completionTokens).toBe(3);
  });
});
