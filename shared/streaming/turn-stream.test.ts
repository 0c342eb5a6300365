import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { ChatEvent } from './contracts.js';
import { DependencyError, ValidationError } from '../errors.js';
import type { TurnEventSink } from './turn-event-sink.js';
import type { TurnEventStore } from './turn-event-store.js';
import { TurnStream, type TurnStreamOptions } from './turn-stream.js';

class MemoryStore implements TurnEventStore {
  readonly batches: ChatEvent[][] = [];
  failWith: Error | undefined;
  append(events: readonly ChatEvent[]): Promise<void> {
    if (this.failWith !== undefined) return Promise.reject(this.failWith);
    this.batches.push([...events]);
    return Promise.resolve();
  }
  read(): Promise<ChatEvent[]> {
    return Promise.resolve(this.batches.flat());
  }
}

/** A sink whose sends complete only when the test releases them, one at a time. */
type Turn = { userId: string; sessionId: string };

class SlowSink implements TurnEventSink {
  readonly batches: { turn: Turn; events: ChatEvent[] }[] = [];
  readonly #pending: (() => void)[] = [];
  inFlight = 0;
  maxInFlight = 0;
  async send(turn: Turn, events: readonly ChatEvent[]): Promise<void> {
    this.inFlight += 1;
    this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
    await new Promise<void>((resolve) => this.#pending.push(resolve));
    this.batches.push({ turn, events: [...events] });
    this.inFlight -= 1;
  }
  /** Lets the oldest send complete, then lets the stream take its next step. */
  async release(): Promise<void> {
    const next = this.#pending.shift();
    if (!next) throw new Error('no send is waiting');
    next();
    await settle();
  }
  get waiting(): number {
    return this.#pending.length;
  }
}

class InstantSink implements TurnEventSink {
  readonly batches: { turn: Turn; events: ChatEvent[] }[] = [];
  send(turn: Turn, events: readonly ChatEvent[]): Promise<void> {
    this.batches.push({ turn, events: [...events] });
    return Promise.resolve();
  }
}

async function settle(): Promise<void> {
  for (let i = 0; i < 10; i++) await Promise.resolve();
}

function options(overrides: Partial<TurnStreamOptions> = {}): TurnStreamOptions {
  return {
    userId: 'user_001',
    sessionId: 'session-1',
    chatMessageId: 'turn-1',
    firstSeq: 1,
    store: new MemoryStore(),
    sink: new InstantSink(),
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
    const sink = new InstantSink();
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
    expect(sink.batches.map((b) => b.turn)).toEqual(
      sink.batches.map(() => ({ userId: 'user_001', sessionId: 'session-1' })),
    );
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
    const sink = new InstantSink();
    const stream = new TurnStream(options({ sink }));
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

  it('sends one batch at a time; events emitted while a batch is in flight form the next one', async () => {
    const store = new MemoryStore();
    const sink = new SlowSink();
    const stream = new TurnStream(options({ store, sink }));
    stream.emit({ type: 'message-start', userMessageId: 'u', assistantMessageId: 'a' });
    stream.emit({ type: 'content', delta: 'Hi' });
    await settle();
    expect(sink.waiting).toBe(1);

    for (let round = 1; round <= 3; round++) {
      stream.emit({ type: 'tool-call', round, toolCallId: `c${round}`, name: 't', arguments: '{}' });
      await settle();
    }
    expect(sink.waiting).toBe(1);
    await sink.release();
    expect(sink.waiting).toBe(1);
    stream.emit({ type: 'message-end', finishReason: 'stop' });

    const closed = stream.close();
    await sink.release();
    await sink.release();
    await closed;

    const seqs = (batches: readonly (readonly ChatEvent[])[]) => batches.map((b) => b.map((e) => e.seq));
    expect(seqs(sink.batches.map((b) => b.events))).toEqual([[1, 2], [3, 4, 5], [6]]);
    expect(seqs(store.batches)).toEqual([[1, 2], [3, 4, 5], [6]]);
    expect(sink.maxInFlight).toBe(1);
  });

  it('stops sending after a failure and rejects close with it, wrapped as a DependencyError', async () => {
    const store = new MemoryStore();
    const sink = new InstantSink();
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
    expect(sink.batches.flatMap((b) => b.events).map((e) => e.seq)).toEqual([1, 2]);
    expect(store.batches.flat().map((e) => e.seq)).toEqual([1]);
    expect(stream.emitted.map((e) => e.seq)).toEqual([1, 2, 3]);
    await expect(stream.close()).rejects.toBe(error);
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
    const sink = new InstantSink();
    const stream = new TurnStream(options({ firstSeq: 4, sink }));
    await stream.close();
    expect(stream.nextSeq).toBe(4);
    expect(sink.batches).toEqual([]);
    expect(() => stream.emit({ type: 'content', delta: 'late' })).toThrow(/closed/);
  });
});
