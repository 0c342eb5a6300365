// The process's side of stopping turns: a stop taken in this process aborts the turn's open model stream at once;
// one taken elsewhere (or before the stream opened) is found by reads that come as the stream opens, then at most
// once per poll interval, and only while it is open.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { MemorySessions, MemoryTurnCancellations } from '../../../test/support/in-memory-ports.js';
import type { TurnRef } from '../../conversation/messages.js';
import { TurnCancelSignals } from './turn-cancel-signals.js';

const turn: TurnRef = {
  userId: 'user_001',
  sessionId: '0f8fad5b-d9cb-469f-a165-70867728950e',
  chatMessageId: '7c9e6679-7425-40de-944b-e07fc1f90ae7',
};
const other: TurnRef = { ...turn, chatMessageId: '9b2f3c1e-1111-4a4a-8b8b-0123456789ab' };
const AT = '2026-11-21T10:00:00.000Z';
const POLL_MS = 1_000;

let store: MemoryTurnCancellations;
let here: TurnCancelSignals;
/** Another instance over the same store: what it takes is recorded, never signalled to this process. */
let elsewhere: TurnCancelSignals;

beforeEach(() => {
  vi.useFakeTimers();
  store = new MemoryTurnCancellations();
  here = new TurnCancelSignals(store, { pollIntervalMs: POLL_MS });
  elsewhere = new TurnCancelSignals(store, { pollIntervalMs: POLL_MS });
});
afterEach(() => vi.useRealTimers());

describe('stopping the turns of a deleted conversation', () => {
  it("aborts the session's streams open in this process at once, and no other session's", () => {
    const watch = here.watch(turn);
    const sibling = here.watch(other);
    const elsewhereSession = here.watch({ ...turn, sessionId: '1f8fad5b-d9cb-469f-a165-70867728950e' });
    expect(here.stopSession(turn.sessionId)).toBe(2);
    expect(watch.signal.aborted).toBe(true);
    expect(sibling.signal.aborted).toBe(true);
    expect(elsewhereSession.signal.aborted).toBe(false);
    expect(here.stopSession(turn.sessionId)).toBe(0);
    for (const open of [watch, sibling, elsewhereSession]) open.close();
  });

  it("finds a delete taken elsewhere by its poll, which reads the conversation's tombstone", async () => {
    const sessions = new MemorySessions();
    const { sessionId } = await sessions.create(turn.userId);
    const ref = { ...turn, sessionId };
    const watching = new TurnCancelSignals(store, {
      pollIntervalMs: POLL_MS,
      isDeleted: (r) => sessions.isDeleted(r.userId, r.sessionId),
    });
    const watch = watching.watch(ref);
    await vi.advanceTimersByTimeAsync(POLL_MS);
    expect(watch.signal.aborted).toBe(false);
    // The delete marks the session (and purges the turn's data, any stop's record with it).
    await sessions.markDeleting(ref.userId, sessionId);
    await vi.advanceTimersByTimeAsync(POLL_MS);
    expect(watch.signal.aborted).toBe(true);
    expect(watching.stats()).toMatchObject({ stoppedByPoll: 1, stoppedHere: 0 });
    watch.close();
  });
});

describe('stopping turns', () => {
  it("aborts the turn's stream open in this process at once, and records the stop for every instance", async () => {
    const watch = here.watch(turn);
    const unrelated = here.watch(other);
    await here.request(turn, AT);
    expect(watch.signal.aborted).toBe(true);
    expect(unrelated.signal.aborted).toBe(false);
    expect(store.requests.get(`${turn.sessionId}/${turn.chatMessageId}`)).toEqual({
      ref: turn,
      requestedAt: AT,
    });
    expect(await elsewhere.isRequested(turn)).toBe(true);
    expect(here.stats()).toMatchObject({ stoppedHere: 1, stoppedByPoll: 0 });
    watch.close();
    unrelated.close();
  });

  it('finds a stop taken elsewhere with one read as the stream opens and one per interval, none once it closed', async () => {
    store.reads = 0;
    const watch = here.watch(turn);
    await vi.advanceTimersByTimeAsync(0);
    expect(store.reads).toBe(1);
    await vi.advanceTimersByTimeAsync(POLL_MS - 1);
    expect(store.reads).toBe(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(store.reads).toBe(2);
    await vi.advanceTimersByTimeAsync(POLL_MS * 3);
    expect(store.reads).toBe(5);
    expect(watch.signal.aborted).toBe(false);

    await elsewhere.request(turn, AT);
    expect(watch.signal.aborted).toBe(false);
    await vi.advanceTimersByTimeAsync(POLL_MS);
    expect(watch.signal.aborted).toBe(true);
    expect(store.reads).toBe(6);
    // Aborted: no more reads, whatever the clock does.
    await vi.advanceTimersByTimeAsync(POLL_MS * 10);
    expect(store.reads).toBe(6);
    watch.close();

    const next = here.watch(other);
    await vi.advanceTimersByTimeAsync(POLL_MS * 2);
    next.close();
    await vi.advanceTimersByTimeAsync(POLL_MS * 10);
    expect(store.reads).toBe(9);
    expect(here.stats()).toMatchObject({ watches: 2, polls: 9, stoppedHere: 0, stoppedByPoll: 1 });
  });

  it('finds at once a stop recorded before the stream opened, which no signal could reach', async () => {
    // The stop came while the step prepared its round, after the step's own check: nothing here was watching.
    await here.request(turn, AT);
    const watch = here.watch(turn);
    await vi.advanceTimersByTimeAsync(0);
    expect(watch.signal.aborted).toBe(true);
    expect(here.stats()).toMatchObject({ stoppedHere: 0, stoppedByPoll: 1, polls: 1 });
    watch.close();
  });

  it("reads first an interval after the step's own check, and not at all for a stream that ends sooner", async () => {
    store.reads = 0;
    const checkedAt = Date.now();
    // The step prepared its round for 300 ms after its check: the first read comes 700 ms after the stream opens.
    await vi.advanceTimersByTimeAsync(300);
    const watch = here.watch(turn, undefined, { checkedAt });
    await vi.advanceTimersByTimeAsync(POLL_MS - 300 - 1);
    expect(store.reads).toBe(0);
    await elsewhere.request(turn, AT);
    await vi.advanceTimersByTimeAsync(1);
    expect(store.reads).toBe(1);
    expect(watch.signal.aborted).toBe(true);
    watch.close();

    const short = here.watch(other, undefined, { checkedAt: Date.now() });
    await vi.advanceTimersByTimeAsync(POLL_MS - 1);
    short.close();
    await vi.advanceTimersByTimeAsync(POLL_MS * 5);
    expect(store.reads).toBe(1);
    // A check older than the interval: the stream's first read comes at once.
    const late = here.watch(other, undefined, { checkedAt: Date.now() - POLL_MS * 2 });
    await vi.advanceTimersByTimeAsync(0);
    expect(store.reads).toBe(2);
    late.close();
  });

  it('never stacks reads behind a slow store, and goes on polling after a read fails', async () => {
    let release: (() => void) | undefined;
    let calls = 0;
    const slow = new TurnCancelSignals(
      {
        request: () => Promise.resolve(),
        isRequested: () => {
          calls += 1;
          if (calls === 1) return Promise.reject(new Error('store unavailable'));
          if (calls === 2) return new Promise((resolve) => (release = () => resolve(false)));
          return Promise.resolve(true);
        },
      },
      { pollIntervalMs: POLL_MS },
    );
    const errors: unknown[] = [];
    const watch = slow.watch(turn, (error) => errors.push(error));
    await vi.advanceTimersByTimeAsync(0);
    expect(errors).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(POLL_MS);
    expect(calls).toBe(2);
    // The second read hangs for ten intervals: no read starts meanwhile.
    await vi.advanceTimersByTimeAsync(POLL_MS * 10);
    expect(calls).toBe(2);
    release?.();
    await vi.advanceTimersByTimeAsync(POLL_MS);
    expect(calls).toBe(3);
    expect(watch.signal.aborted).toBe(true);
    watch.close();
  });

  it('ignores what a read finds after its stream closed', async () => {
    let release: ((value: boolean) => void) | undefined;
    const late = new TurnCancelSignals(
      { request: () => Promise.resolve(), isRequested: () => new Promise((resolve) => (release = resolve)) },
      { pollIntervalMs: POLL_MS },
    );
    const watch = late.watch(turn);
    watch.close();
    release?.(true);
    await vi.advanceTimersByTimeAsync(POLL_MS);
    expect(watch.signal.aborted).toBe(false);
    expect(late.stats().stoppedByPoll).toBe(0);
  });
});
