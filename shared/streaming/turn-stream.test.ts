import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { ChatEvent } from './contracts.js';
import { DependencyError, ValidationError } from '../errors.js';
import type { TurnEventSink } from './turn-event-sink.js';
import type { TurnEventStore } from './turn-event-store.js';
import { TurnStream, type TurnStreamOptions } from './turn-stream.js';

class MemoryStore implements TurnEventStore {
  readonly batches: ChatEvent[][] = [];
  failWith: Error | undefined;
  /** When set, each write waits until the test releases it. */
  readonly #pending: (() => void)[] = [];
  slow = false;
  inFlight = 0;
  maxInFlight = 0;
  async append(events: readonly ChatEvent[]): Promise<'stored'> {
    if (this.failWith !== undefined) throw this.failWith;
    this.inFlight += 1;
    this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
    if (this.slow) await new Promise<void>((resolve) => this.#pending.push(resolve));
    this.batches.push([...events]);
    this.inFlight -= 1;
    return 'stored';
  }
  read(): Promise<ChatEvent[]> {
    return Promise.resolve(this.batches.flat());
  }
  /** Lets the oldest write complete, then lets the stream take its next step. */
  async release(): Promise<void> {
    const next = this.#pending.shift();
    if (!next) throw new Error('no write is waiting');
    next();
    await settle();
  }
  get waiting(): number {
    return this.#pending.length;
  }
}

/** Records what is sent, and refuses (as a test failure) an event its store has not stored yet. */
class CheckingSink implements TurnEventSink {
  readonly batches: { userId: string; sessionId: string; events: ChatEvent[] }[] = [];
  failWith: Error | undefined;
  constructor(private readonly store: MemoryStore) {}
  send(turn: { userId: string; sessionId: string }, events: readonly ChatEvent[]): Promise<void> {
    const stored = new Set(this.store.batches.flat().map((e) => e.seq));
    for (const event of events)
      if (!stored.has(event.seq)) throw new Error(`seq ${event.seq} sent before stored`);
    if (this.failWith !== undefined) return Promise.reject(this.failWith);
    this.batches.push({ ...turn, events: [...events] });
    return Promise.resolve();
  }
}

async function settle(): Promise<void> {
  for (let i = 0; i < 10; i++) await Promise.resolve();
}

function options(overrides: Partial<TurnStreamOptions> = {}): TurnStreamOptions {
  const store = (overrides.store as MemoryStore | undefined) ?? new MemoryStore();
  return {
    userId: 'user_001',
    sessionId: 'session-1',
    chatMessageId: 'turn-1',
    firstSeq: 1,
    store,
    sink: new CheckingSink(store),
    coalescing: { flushIntervalMs: 50, flushMaxChars: 1000 },
    ...overrides,
  };
}

describe('TurnStream', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });

  afterEach(() => {
    vi.useRealTimers();
  });

  it('stamps the turn ids and consecutive seqs from firstSeq, and stores and sends every event', async () => {
    const store = new MemoryStore();
    const sink = new CheckingSink(store);
    const stream = new TurnStream(options({ firstSeq: 7, store, sink }));
    stream.emit({ type: 'tool-call', round: 1, toolCallId: 'c1', name: 'clock', arguments: '{}' });
    stream.emit({
      type: 'tool-result',
      round: 1,
      toolCallId: 'c1',
      name: 'clock',
      result: 'noon',
      isError: false,
    });
    expect(stream.nextSeq).toBe(9);
    await stream.close();

    expect(stream.emitted).toEqual([
      {
        type: 'tool-call',
        round: 1,
        toolCallId: 'c1',
        name: 'clock',
        arguments: '{}',
        sessionId: 'session-1',
        chatMessageId: 'turn-1',
        seq: 7,
      },
      {
        type: 'tool-result',
        round: 1,
        toolCallId: 'c1',
        name: 'clock',
        result: 'noon',
        isError: false,
        sessionId: 'session-1',
        chatMessageId: 'turn-1',
        seq: 8,
      },
    ]);
    expect(store.batches.flat()).toEqual(stream.emitted);
    expect(sink.batches.flatMap((b) => b.events)).toEqual(stream.emitted);
    expect(sink.batches.every((b) => b.userId === 'user_001' && b.sessionId === 'session-1')).toBe(true);
    expect(stream.nextSeq).toBe(9);
  });

  it('coalesces text deltas into events and flushes them before any other event', async () => {
    const store = new MemoryStore();
    const stream = new TurnStream(options({ store }));
    stream.emit({ type: 'message-start', userMessageId: 'u', assistantMessageId: 'a' });
    for (const delta of ['Let', ' me', ' think']) stream.emit({ type: 'reasoning-delta', delta });
    stream.emit({ type: 'reasoning-end' });
    for (const delta of ['The', ' answer', ' is', ' 42', '.']) stream.emit({ type: 'content', delta });
    // Buffered text has no seq yet.
    expect(stream.nextSeq).toBe(6);
    stream.emit({ type: 'message-end', finishReason: 'stop' });
    await stream.close();

    expect(stream.emitted.map((e) => [e.seq, e.type, 'delta' in e ? e.delta : ''])).toEqual([
      [1, 'message-start', ''],
      [2, 'reasoning-delta', 'Let'],
      [3, 'reasoning-delta', ' me think'],
      [4, 'reasoning-end', ''],
      [5, 'content', 'The'],
      [6, 'content', ' answer is 42.'],
      [7, 'message-end', ''],
    ]);
    expect(store.batches.flat()).toEqual(stream.emitted);
    expect(stream.nextSeq).toBe(8);
  });

  it('sends buffered text when the coalescing interval passes, without waiting for close', async () => {
    const store = new MemoryStore();
    const sink = new CheckingSink(store);
    const stream = new TurnStream(options({ store, sink }));
    stream.emit({ type: 'content', delta: 'a' });
    stream.emit({ type: 'content', delta: 'b' });
    stream.emit({ type: 'content', delta: 'c' });
    await settle();
    expect(sink.batches.flatMap((b) => b.events).map((e) => e.seq)).toEqual([1]);

    await vi.advanceTimersByTimeAsync(50);
    expect(sink.batches.flatMap((b) => b.events)).toMatchObject([
      { seq: 1, type: 'content', delta: 'a' },
      { seq: 2, type: 'content', delta: 'bc' },
    ]);
    await stream.close();
  });

  it('stores one batch at a time and sends it only once stored; what comes meanwhile forms the next batch', async () => {
    const store = new MemoryStore();
    store.slow = true;
    const sink = new CheckingSink(store);
    const stream = new TurnStream(options({ store, sink }));
    stream.emit({ type: 'message-start', userMessageId: 'u', assistantMessageId: 'a' });
    stream.emit({ type: 'content', delta: 'Hi' });
    await settle();
    expect(store.waiting).toBe(1);
    expect(sink.batches).toEqual([]);

    for (let round = 1; round <= 3; round++) {
      stream.emit({ type: 'tool-call', round, toolCallId: `c${round}`, name: 't', arguments: '{}' });
      await settle();
    }
    expect(store.waiting).toBe(1);
    await store.release();
    expect(sink.batches.map((b) => b.events.map((e) => e.seq))).toEqual([[1, 2]]);
    expect(store.waiting).toBe(1);
    stream.emit({ type: 'message-end', finishReason: 'stop' });

    const closed = stream.close();
    await store.release();
    await store.release();
    await closed;

    const seqs = (batches: readonly (readonly ChatEvent[])[]) => batches.map((b) => b.map((e) => e.seq));
    expect(seqs(store.batches)).toEqual([[1, 2], [3, 4, 5], [6]]);
    expect(seqs(sink.batches.map((b) => b.events))).toEqual([[1, 2], [3, 4, 5], [6]]);
    expect(store.maxInFlight).toBe(1);
  });

  it('sends nothing that could not be stored: after a store failure it stops and close rejects', async () => {
    const store = new MemoryStore();
    const sink = new CheckingSink(store);
    const stream = new TurnStream(options({ store, sink }));
    stream.emit({ type: 'message-start', userMessageId: 'u', assistantMessageId: 'a' });
    await settle();
    const cause = new Error('disk full');
    store.failWith = cause;
    stream.emit({ type: 'content', delta: 'lost' });
    await settle();
    store.failWith = undefined;
    stream.emit({ type: 'message-end', finishReason: 'stop' });

    const error = await stream.close().then(
      () => undefined,
      (thrown: unknown) => thrown,
    );
    expect(error).toBeInstanceOf(DependencyError);
    expect((error as DependencyError).cause).toBe(cause);
    expect((error as DependencyError).message).toContain('disk full');
    expect(sink.batches.flatMap((b) => b.events).map((e) => e.seq)).toEqual([1]);
    expect(store.batches.flat().map((e) => e.seq)).toEqual([1]);
    expect(stream.emitted.map((e) => e.seq)).toEqual([1, 2, 3]);
    await expect(stream.close()).rejects.toBe(error);
  });

  it('goes on when a live send fails: the events are stored, and the failure is reported', async () => {
    const store = new MemoryStore();
    const sink = new CheckingSink(store);
    sink.failWith = new Error('hub unreachable');
    const reported: unknown[] = [];
    const stream = new TurnStream(options({ store, sink, onSendError: (error) => reported.push(error) }));
    stream.emit({ type: 'message-start', userMessageId: 'u', assistantMessageId: 'a' });
    stream.emit({ type: 'message-end', finishReason: 'stop' });
    await stream.close();
    expect(store.batches.flat().map((e) => e.seq)).toEqual([1, 2]);
    expect(reported).toEqual([sink.failWith]);
  });

  it('passes an AppError from a port through as it is', async () => {
    const failure = new ValidationError('bad event');
    const store = new MemoryStore();
    store.failWith = failure;
    const stream = new TurnStream(options({ store }));
    stream.emit({ type: 'error', code: 'x', message: 'y' });
    await expect(stream.close()).rejects.toBe(failure);
  });

  it('resolves close at once when nothing was emitted, and refuses events after close', async () => {
    const store = new MemoryStore();
    const sink = new CheckingSink(store);
    const stream = new TurnStream(options({ firstSeq: 4, store, sink }));
    await stream.close();
    expect(stream.nextSeq).toBe(4);
    expect(sink.batches).toEqual([]);
    expect(() => stream.emit({ type: 'content', delta: 'late' })).toThrow(/closed/);
  });
});
