// The relay's exactly-once, in-order guarantee under late join, resume, and a live feed that is early, late,
// out of order, repetitive or silent; and its timers: gap lookup, quiet-period reads with backoff, keep-alive, idle
// timeout; and what it costs: store reads only to fill a gap, counted over simulated minutes.
import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { ChatEvent } from './contracts.js';
import type { TurnEventStore } from './turn-event-store.js';
import type { FeedSubscription, UserEventFeed } from './user-event-feed.js';
import { relayTurnEvents, type RelayOptions } from './turn-event-relay.js';

const USER = 'user_001';
const SESSION = 'session-1';
const TURN = 'turn-1';

/** A turn of `length` events: message-start, content deltas, message-end. */
function turn(length: number, ids: { sessionId?: string; chatMessageId?: string } = {}): ChatEvent[] {
  const base = { sessionId: ids.sessionId ?? SESSION, chatMessageId: ids.chatMessageId ?? TURN };
  return Array.from({ length }, (_, i): ChatEvent => {
    const seq = i + 1;
    if (seq === 1)
      return { ...base, seq, type: 'message-start', userMessageId: 'u', assistantMessageId: 'a' };
    if (seq === length) return { ...base, seq, type: 'message-end', finishReason: 'stop' };
    return { ...base, seq, type: 'content', delta: `d${seq}` };
  });
}

/** Seqs are 1-based: `ev(events, 3)` is the event with seq 3. */
function ev(events: readonly ChatEvent[], seq: number): ChatEvent {
  const event = events[seq - 1];
  if (!event) throw new Error(`no event ${seq}`);
  return event;
}

class FakeStore implements TurnEventStore {
  readonly events: ChatEvent[] = [];
  /** The afterSeq of every read, in order. */
  readonly reads: number[] = [];
  /** How many of the next reads fail. */
  failures = 0;
  /** Runs at the start of each read: what the writer does while the relay reads. */
  duringRead: (() => void) | undefined;

  append(events: readonly ChatEvent[]): Promise<'stored'> {
    for (const event of events) {
      const stored = this.events.some(
        (e) =>
          e.sessionId === event.sessionId && e.chatMessageId === event.chatMessageId && e.seq === event.seq,
      );
      if (!stored) this.events.push(event);
    }
    return Promise.resolve('stored');
  }

  read(sessionId: string, chatMessageId: string, afterSeq: number): Promise<ChatEvent[]> {
    this.reads.push(afterSeq);
    this.duringRead?.();
    if (this.failures > 0) {
      this.failures--;
      return Promise.reject(new Error('store unavailable'));
    }
    const found = this.events
      .filter((e) => e.sessionId === sessionId && e.chatMessageId === chatMessageId && e.seq > afterSeq)
      .sort((a, b) => a.seq - b.seq);
    return Promise.resolve(found);
  }
}

interface FakeSubscription {
  turn: { userId: string; sessionId: string };
  onEvent: (event: ChatEvent) => void;
  closed: boolean;
}

class FakeFeed implements UserEventFeed {
  readonly subscriptions: FakeSubscription[] = [];
  /** Resolves subscribe(); tests may replace it to hold the subscription back. */
  ready: () => Promise<void> = () => Promise.resolve();

  async subscribe(
    turn: { userId: string; sessionId: string },
    onEvent: (event: ChatEvent) => void,
  ): Promise<FeedSubscription> {
    await this.ready();
    const subscription: FakeSubscription = { turn: { ...turn }, onEvent, closed: false };
    this.subscriptions.push(subscription);
    return {
      close: () => {
        subscription.closed = true;
        return Promise.resolve();
      },
    };
  }

  /** Delivers to every open subscription, whatever it follows: the relay must pick its own turn's events. */
  push(...events: ChatEvent[]): void {
    for (const event of events) {
      for (const s of this.subscriptions) if (!s.closed) s.onEvent(event);
    }
  }

  get open(): number {
    return this.subscriptions.filter((s) => !s.closed).length;
  }
}

interface Capture {
  /** The event frames, each checked to carry its seq as id and its type as event name. */
  events: ChatEvent[];
  comments: string[];
  /** The `stream-closed` notices: not events of the turn, so without an id. */
  notices: unknown[];
  retries: number[];
  done: boolean;
  cancel(): Promise<void>;
}

/** Reads the stream's bytes as a client does, decoding UTF-8 across chunks and parsing SSE frames. */
function capture(stream: ReadableStream<Uint8Array>): Capture {
  const reader = stream.getReader();
  const decoder = new TextDecoder();
  const result: Capture = {
    events: [],
    comments: [],
    notices: [],
    retries: [],
    done: false,
    cancel: () => reader.cancel(),
  };
  const parser = createParser({
    onEvent: (message: EventSourceMessage) => {
      if (message.event === 'stream-closed') {
        expect(message.id).toBeUndefined();
        result.notices.push(JSON.parse(message.data));
        return;
      }
      const event = JSON.parse(message.data) as ChatEvent;
      expect(message.id).toBe(String(event.seq));
      expect(message.event).toBe(event.type);
      result.events.push(event);
    },
    onComment: (comment) => result.comments.push(comment.trim()),
    onRetry: (retry) => result.retries.push(retry),
  });
  void (async () => {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      parser.feed(decoder.decode(value, { stream: true }));
    }
    result.done = true;
  })();
  return result;
}

let store: FakeStore;
let feed: FakeFeed;
let errors: unknown[];

beforeEach(() => {
  vi.useFakeTimers();
  store = new FakeStore();
  feed = new FakeFeed();
  errors = [];
});

afterEach(() => {
  vi.useRealTimers();
});

function relay(options: Partial<RelayOptions> = {}): Capture {
  return capture(
    relayTurnEvents({
      userId: USER,
      sessionId: SESSION,
      chatMessageId: TURN,
      afterSeq: 0,
      store,
      feed,
      idleTimeoutMs: 60_000,
      onError: (error) => errors.push(error),
      ...options,
    }),
  );
}

/** Lets pending promises (subscribe, store reads, stream reads) settle, and runs timers due within `ms`. */
async function advance(ms = 0): Promise<void> {
  await vi.advanceTimersByTimeAsync(ms);
}

/** The stream has ended and left nothing behind: no timer, no open subscription. */
function expectCleanEnd(sse: Capture): void {
  expect(sse.done).toBe(true);
  expect(feed.open).toBe(0);
  expect(vi.getTimerCount()).toBe(0);
}

describe('relayTurnEvents', () => {
  it('sends retry first, then a finished turn in full to a late client, and closes at once', async () => {
    const events = turn(5);
    await store.append(events);

    const sse = relay({ retryMs: 2500 });
    await advance();

    expect(sse.retries).toEqual([2500]);
    expect(sse.events).toEqual(events);
    expectCleanEnd(sse);
    expect(feed.subscriptions.map((s) => s.turn)).toEqual([{ userId: USER, sessionId: SESSION }]);
    expect(errors).toEqual([]);
  });

  it('subscribes before it reads the store', async () => {
    const order: string[] = [];
    feed.ready = () => {
      order.push('subscribe');
      return Promise.resolve();
    };
    store.duringRead = () => order.push('read');

    relay();
    await advance();

    expect(order).toEqual(['subscribe', 'read']);
  });

  it('joins mid-turn: backfills from the store, then relays live events, without duplicate or gap', async () => {
    const events = turn(7);
    await store.append(events.slice(0, 3));
    // While the relay reads, the writer stores and sends event 4: the read and the feed both deliver it.
    store.duringRead = () => {
      store.duringRead = undefined;
      void store.append([ev(events, 4)]);
      feed.push(ev(events, 4));
    };

    const sse = relay();
    await advance();
    expect(sse.events).toEqual(events.slice(0, 4));

    for (const event of events.slice(4)) {
      await store.append([event]);
      feed.push(event);
      await advance();
    }

    expect(sse.events).toEqual(events);
    expectCleanEnd(sse);
  });

  it('resumes after the Last-Event-ID, sending only the later events', async () => {
    const events = turn(6);
    await store.append(events.slice(0, 4));

    const sse = relay({ afterSeq: 2 });
    await advance();
    expect(sse.events).toEqual(events.slice(2, 4));

    await store.append(events.slice(4));
    feed.push(...events.slice(4));
    await advance();

    expect(sse.events).toEqual(events.slice(2));
    expectCleanEnd(sse);
  });

  it('closes at once, sending nothing, when the client resumes after the terminal event', async () => {
    await store.append(turn(4));

    const sse = relay({ afterSeq: 4 });
    await advance();

    expect(sse.events).toEqual([]);
    expectCleanEnd(sse);
  });

  it('holds an event that reaches the feed before the one before it is stored, and fills the gap from the store', async () => {
    const events = turn(5);
    await store.append(events.slice(0, 2));
    const sse = relay({ gapRetryMs: 50, quietReadMs: 600_000 });
    await advance();
    const readsBefore = store.reads.length;

    // Event 4 arrives live; event 3 was sent too but is lost, and neither is stored yet.
    feed.push(ev(events, 4));
    await advance(350);
    expect(sse.events).toEqual(events.slice(0, 2));
    // Looked up 50 ms after the gap showed, then 100 and 200 ms later: a gap that stays costs less and less.
    expect(store.reads.slice(readsBefore)).toEqual([2, 2, 2]);

    await store.append([ev(events, 3), ev(events, 4)]);
    await advance(400);
    expect(sse.events).toEqual(events.slice(0, 4));

    const readsAfterFill = store.reads.length;
    await advance(500);
    expect(store.reads.length).toBe(readsAfterFill);

    feed.push(ev(events, 5));
    await advance();
    expect(sse.events).toEqual(events);
    expectCleanEnd(sse);
  });

  it('skips a seq the store still lacks once the terminal event is stored (a step that failed before sending it)', async () => {
    const events = turn(6);
    // seq 4 belonged to a tool call whose activity failed for good; the turn then ended with seq 6.
    await store.append(events.filter((event) => event.seq !== 4));

    const sse = relay();
    await advance(200);

    expect(sse.events.map((event) => event.seq)).toEqual([1, 2, 3, 5, 6]);
    expectCleanEnd(sse);
  });

  it('orders live events that arrive out of order and drops the repeats', async () => {
    const events = turn(6);
    const sse = relay({ quietReadMs: 600_000 });
    await advance();

    feed.push(...[2, 1, 1, 3, 2, 5, 3].map((seq) => ev(events, seq)));
    await advance();
    expect(sse.events).toEqual(events.slice(0, 3));

    feed.push(ev(events, 6), ev(events, 4), ev(events, 5), ev(events, 4));
    await advance();
    expect(sse.events).toEqual(events);
    expectCleanEnd(sse);
  });

  it('picks up from the store, after a quiet period, events the live feed never delivers, waiting longer each time', async () => {
    const events = turn(5);
    await store.append(events.slice(0, 2));
    const sse = relay({ quietReadMs: 1000 });
    await advance();

    await store.append(events.slice(2, 4));
    await advance(999);
    expect(sse.events).toEqual(events.slice(0, 2));
    await advance(1);
    expect(sse.events).toEqual(events.slice(0, 4));
    expect(store.reads.at(-1)).toBe(2);

    await store.append([ev(events, 5)]);
    await advance(1999);
    expect(sse.events).toEqual(events.slice(0, 4));
    await advance(1);
    expect(sse.events).toEqual(events);
    expectCleanEnd(sse);
  });

  it('reads the store only for the backfill while live events flow, for a whole minute', async () => {
    const events = turn(122);
    await store.append(events.slice(0, 1));
    const sse = relay({ idleTimeoutMs: 600_000 });
    await advance();
    expect(store.reads).toEqual([0]);

    // One batch every 500 ms (stored, then sent), for 60 s.
    for (const event of events.slice(1, 121)) {
      await store.append([event]);
      feed.push(event);
      await advance(500);
    }
    expect(sse.events).toEqual(events.slice(0, 121));
    expect(store.reads).toEqual([0]);

    await store.append([ev(events, 122)]);
    feed.push(ev(events, 122));
    await advance();
    expect(sse.events).toEqual(events);
    expect(store.reads).toEqual([0]);
    expectCleanEnd(sse);
  });

  it('backs off its quiet-period reads from 2 s to 30 s, and starts over when a live event arrives', async () => {
    const events = turn(4);
    await store.append(events.slice(0, 1));
    const sse = relay({ idleTimeoutMs: 3_600_000, keepAliveMs: 3_600_000 });
    await advance();
    expect(store.reads).toHaveLength(1);

    // Quiet for a minute: reads 2, 6, 14, 30 and 60 s after the backfill.
    await advance(60_000);
    expect(store.reads).toHaveLength(1 + 5);
    // At the cap: two reads a minute.
    await advance(60_000);
    expect(store.reads).toHaveLength(1 + 5 + 2);

    // A live event: the next quiet read comes 2 s after it, not 30 s.
    await store.append([ev(events, 2)]);
    feed.push(ev(events, 2));
    await advance(1_999);
    expect(store.reads).toHaveLength(8);
    await advance(1);
    expect(store.reads).toHaveLength(9);
    expect(sse.events).toEqual(events.slice(0, 2));
    expect(sse.done).toBe(false);
    await sse.cancel();
  });

  it("ignores other turns' events, of the same session or the same message id elsewhere", async () => {
    const events = turn(3);
    const sse = relay();
    await advance();

    feed.push(...turn(3, { chatMessageId: 'turn-2' }), ...turn(3, { sessionId: 'session-2' }));
    await advance();
    expect(sse.events).toEqual([]);
    expect(sse.done).toBe(false);

    feed.push(...events);
    await advance();
    expect(sse.events).toEqual(events);
    expectCleanEnd(sse);
  });

  it('sends keep-alive comments while idle and ends with a comment after the idle timeout', async () => {
    const events = turn(6);
    await store.append(events.slice(0, 2));
    const sse = relay({ idleTimeoutMs: 30_000, keepAliveMs: 10_000 });
    await advance();

    await advance(20_000);
    expect(sse.comments).toEqual(['keep-alive', 'keep-alive']);
    // A new event restarts the idle clock.
    feed.push(ev(events, 3));
    await advance(29_999);
    expect(sse.done).toBe(false);
    expect(sse.comments).toHaveLength(4);

    await advance(1);
    expect(sse.events).toEqual(events.slice(0, 3));
    expect(sse.comments.at(-1)).toBe('no event for 30000 ms; reconnect with Last-Event-ID 3');
    expectCleanEnd(sse);
  });

  it('ends the stream of a turn with no event after startTimeoutMs, with a notice saying why', async () => {
    let ended = 0;
    const sse = relay({ startTimeoutMs: 5_000, onEnd: () => (ended += 1) });
    await advance(4_999);
    expect(sse.done).toBe(false);
    await advance(1);
    expect(sse.events).toEqual([]);
    expect(sse.notices).toEqual([
      { reason: 'not-started', message: expect.stringMatching(/has not started/) },
    ]);
    expectCleanEnd(sse);
    expect(ended).toBe(1);
  });

  it('keeps the stream of a turn that starts in time, and of a resume, past startTimeoutMs', async () => {
    const events = turn(4);
    const sse = relay({ startTimeoutMs: 5_000 });
    await advance(1_000);
    feed.push(ev(events, 1));
    const resumed = relay({ startTimeoutMs: 5_000, afterSeq: 1 });
    await advance(10_000);
    expect(sse.done).toBe(false);
    expect(resumed.done).toBe(false);
    expect(sse.notices).toEqual([]);
    feed.push(...events.slice(1));
    await advance();
    expect(sse.events).toEqual(events);
    expect(resumed.events).toEqual(events.slice(1));
  });

  it('calls onEnd once when the client disconnects', async () => {
    let ended = 0;
    const sse = relay({ onEnd: () => (ended += 1) });
    await advance();
    await sse.cancel();
    await advance(120_000);
    expect(ended).toBe(1);
  });

  it('stops its timers and closes the subscription when the client disconnects', async () => {
    const events = turn(5);
    await store.append(events.slice(0, 2));
    const sse = relay();
    await advance();
    expect(feed.open).toBe(1);

    await sse.cancel();
    const reads = store.reads.length;
    feed.push(ev(events, 3));
    await advance(120_000);

    expect(feed.open).toBe(0);
    expect(vi.getTimerCount()).toBe(0);
    expect(store.reads.length).toBe(reads);
  });

  it('closes a subscription that completes after the client has gone', async () => {
    let release = (): void => undefined;
    feed.ready = () => new Promise<void>((resolve) => (release = resolve));
    const sse = relay();
    await advance();

    await sse.cancel();
    release();
    await advance();

    expect(feed.subscriptions).toHaveLength(1);
    expect(feed.open).toBe(0);
    expect(store.reads).toEqual([]);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('reports store failures, retries on the next poll, and never skips ahead of a missing event', async () => {
    const events = turn(4);
    await store.append(events.slice(0, 2));
    store.failures = 2;
    const sse = relay({ quietReadMs: 1000, gapRetryMs: 50 });
    await advance();
    // Event 3 is sent live but not readable; event 2 is stored but the store is failing.
    feed.push(ev(events, 3));
    await advance(50);
    expect(sse.events).toEqual([]);
    expect(errors).toHaveLength(2);
    expect(errors[0]).toMatchObject({ message: 'store unavailable' });

    await advance(100);
    expect(sse.events).toEqual(events.slice(0, 3));

    feed.push(ev(events, 4));
    await advance();
    expect(sse.events).toEqual(events);
    expectCleanEnd(sse);
  });

  it('relays from the store alone, without backing off, when the feed cannot subscribe', async () => {
    const events = turn(3);
    await store.append(events.slice(0, 1));
    const failure = new Error('feed unavailable');
    feed.ready = () => Promise.reject(failure);
    const sse = relay({ quietReadMs: 1000 });
    await advance();
    expect(sse.events).toEqual(events.slice(0, 1));
    expect(errors).toEqual([failure]);

    await advance(3000);
    expect(store.reads).toHaveLength(1 + 3);
    await store.append(events.slice(1));
    await advance(1000);
    expect(sse.events).toEqual(events);
    expect(sse.done).toBe(true);
    expect(vi.getTimerCount()).toBe(0);
  });
});
