// The SSE relay of one chat turn: the turn's events after the client's Last-Event-ID, exactly once each and
// in seq order, ending after the terminal event. It follows the session's live feed first and only then reads
// the store (the backfill), so nothing falls between the two.
import { ValidationError } from '../errors.js';
import { isTerminalEvent, type ChatEvent } from './contracts.js';
import { formatSseComment, formatSseEvent, formatSseNotice, formatSseRetry } from './sse.js';
import type { TurnEventStore } from './turn-event-store.js';
import type { FeedSubscription, UserEventFeed } from './user-event-feed.js';

export interface RelayOptions {
  userId: string;
  sessionId: string;
  chatMessageId: string;
  /** The seq the client already has (from Last-Event-ID); 0 for the whole turn. */
  afterSeq: number;
  store: TurnEventStore;
  feed: UserEventFeed;
  /** No new event for this long → end the stream (with a comment saying so); the client reconnects. */
  idleTimeoutMs: number;
  /**
   * A turn with no event at all for this long after the stream opened from its start (never posted, or still
   * queued) → end the stream with a `stream-closed` notice (a comment when `frame` is another protocol's).
   */
  startTimeoutMs?: number;
  /** Called once when the relay ends, whichever way (the turn's end, the client gone, a timeout). */
  onEnd?: () => void;
  /** Default 15000: comment frames so proxies keep the connection. */
  keepAliveMs?: number;
  /** Default 2000: with no live event for this long, the store is read (then again after twice as long, ...). */
  quietReadMs?: number;
  /** Default 30000: the longest wait between two quiet-period reads, and between two lookups of the same gap. */
  quietReadMaxMs?: number;
  /** Default 50: how soon a missing seq is first looked up in the store (then twice as long each time it is not there). */
  gapRetryMs?: number;
  /** Default 1000, sent first as `retry:`. */
  retryMs?: number;
  onError?: (error: unknown) => void;
  /** An event after which the stream ends too, as after the terminal one (a turn that waits for its user). */
  endsAfter?: (event: ChatEvent) => boolean;
  /** The SSE text of one event; by default its own frame (id, event name, data). Another protocol frames it its way. */
  frame?: (event: ChatEvent) => string;
}

/** The turn's events after afterSeq as SSE, exactly once each and in seq order, ending after the terminal event. */
export function relayTurnEvents(options: RelayOptions): ReadableStream<Uint8Array> {
  let relay: TurnEventRelay | undefined;
  return new ReadableStream<Uint8Array>({
    start(controller) {
      relay = new TurnEventRelay(options, controller);
      relay.start();
    },
    cancel() {
      return relay?.stop();
    },
  });
}

const encoder = new TextEncoder();

type Timer = ReturnType<typeof setTimeout>;

class TurnEventRelay {
  /** The seq to emit next; everything below it has been emitted (or the client had it). */
  private next: number;
  /** Events at or above `next` that have arrived but cannot be emitted yet, by seq. */
  private readonly pending = new Map<number, ChatEvent>();
  private subscription: FeedSubscription | undefined;
  private ended = false;
  private reading = false;
  private idleTimer: Timer | undefined;
  private keepAliveTimer: Timer | undefined;
  private gapTimer: Timer | undefined;
  private quietTimer: Timer | undefined;
  private startTimer: Timer | undefined;
  /** Wait before the next quiet-period read: doubles on each, back to quietReadMs on a live event. */
  private quietDelay: number;
  /** Wait before the next lookup of a missing seq: doubles while the gap stays, back to gapRetryMs when it fills. */
  private gapDelay: number;
  /** Whether the live feed is followed; without it, the quiet-period reads do not back off. */
  private live = false;

  constructor(
    private readonly options: RelayOptions,
    private readonly controller: ReadableStreamDefaultController<Uint8Array>,
  ) {
    this.next = options.afterSeq + 1;
    this.quietDelay = this.quietReadMs;
    this.gapDelay = this.gapRetryMs;
  }

  private get quietReadMs(): number {
    return this.options.quietReadMs ?? 2000;
  }

  private get quietReadMaxMs(): number {
    return Math.max(this.options.quietReadMaxMs ?? 30_000, this.quietReadMs);
  }

  private get gapRetryMs(): number {
    return this.options.gapRetryMs ?? 50;
  }

  start(): void {
    this.write(formatSseRetry(this.options.retryMs ?? 1000));
    this.armIdleTimer();
    this.armStartTimer();
    void this.listenThenBackfill();
  }

  /** Ends the relay without closing the stream (the client went away). */
  async stop(): Promise<void> {
    if (this.ended) return;
    this.end();
    await this.closeSubscription();
  }

  private async listenThenBackfill(): Promise<void> {
    const { userId, sessionId } = this.options;
    try {
      this.subscription = await this.options.feed.subscribe({ userId, sessionId }, (event) =>
        this.receiveLive(event),
      );
      this.live = true;
    } catch (error) {
      // Without the live feed the quiet-period reads still deliver everything, only later.
      this.report(error);
    }
    if (this.ended) {
      await this.closeSubscription();
      return;
    }
    // One seq earlier than needed, to see whether the client's last event already ended the turn.
    await this.readStore(Math.max(0, this.options.afterSeq - 1));
    this.armQuietRead();
  }

  private receiveLive(event: ChatEvent): void {
    if (event.sessionId !== this.options.sessionId || event.chatMessageId !== this.options.chatMessageId)
      return;
    // The feed is alive: the safety net starts over from its shortest wait.
    this.quietDelay = this.quietReadMs;
    this.armQuietRead();
    this.accept([event]);
  }

  /** (Re)starts the wait for a quiet-period read. */
  private armQuietRead(): void {
    if (this.ended) return;
    clearTimeout(this.quietTimer);
    this.quietTimer = setTimeout(() => {
      this.quietTimer = undefined;
      if (this.live) this.quietDelay = Math.min(this.quietDelay * 2, this.quietReadMaxMs);
      void this.readStore().then(() => this.armQuietRead());
    }, this.quietDelay);
  }

  private async readStore(afterSeq = this.next - 1): Promise<void> {
    if (this.reading || this.ended) return;
    this.reading = true;
    const terminalKnown = [...this.pending.values()].some(isTerminalEvent);
    try {
      const { store, sessionId, chatMessageId } = this.options;
      this.accept(await store.read(sessionId, chatMessageId, afterSeq));
      if (terminalKnown) this.skipHoles();
    } catch (error) {
      this.report(error);
    } finally {
      this.reading = false;
      this.scheduleGapLookup();
    }
  }

  private accept(events: readonly ChatEvent[]): void {
    if (this.ended) return;
    for (const event of events) {
      if (event.seq >= this.next) this.pending.set(event.seq, event);
      else if (event.seq === this.options.afterSeq && isTerminalEvent(event)) {
        // The client resumed after the turn's last event: nothing is left to send.
        this.finish();
        return;
      }
    }
    this.drain();
  }

  /** Emits pending events while the next seq is among them; a hole leaves the rest waiting for a lookup. */
  private drain(): void {
    for (let event = this.pending.get(this.next); event && !this.ended; event = this.pending.get(this.next)) {
      this.pending.delete(this.next);
      this.next++;
      this.gapDelay = this.gapRetryMs;
      this.emit(event);
    }
    this.scheduleGapLookup();
  }

  /**
   * The terminal event is written after every other event of the turn has been stored, so a seq that a store
   * read started after the terminal event was known still lacks will never come (an activity that failed
   * before sending it): it is skipped rather than waited for.
   */
  private skipHoles(): void {
    while (!this.ended && this.pending.size > 0) {
      if (!this.pending.has(this.next)) this.next = Math.min(...this.pending.keys());
      this.drain();
    }
  }

  private emit(event: ChatEvent): void {
    clearTimeout(this.startTimer);
    this.write((this.options.frame ?? formatSseEvent)(event));
    this.armIdleTimer();
    if (isTerminalEvent(event) || this.options.endsAfter?.(event) === true) this.finish();
  }

  private scheduleGapLookup(): void {
    if (this.ended || this.pending.size === 0 || this.gapTimer) return;
    const delay = this.gapDelay;
    this.gapTimer = setTimeout(() => {
      this.gapTimer = undefined;
      // A gap the store cannot fill yet is looked up less and less often (a filled one resets this in drain).
      this.gapDelay = Math.min(delay * 2, this.quietReadMaxMs);
      void this.readStore();
    }, delay);
  }

  /** A stream from the turn's start waits this long for its first event, not the whole idle timeout. */
  private armStartTimer(): void {
    const ms = this.options.startTimeoutMs;
    if (ms === undefined || this.options.afterSeq !== 0) return;
    this.startTimer = setTimeout(() => {
      if (this.next !== 1 || this.pending.size > 0) return;
      const message =
        `This answer has not started after ${Math.round(ms / 1000)} s: it was never posted, or it is still ` +
        'waiting behind an earlier one. Open the stream again to keep waiting.';
      this.write(
        this.options.frame === undefined
          ? formatSseNotice({ reason: 'not-started', message })
          : formatSseComment(message),
      );
      this.finish();
    }, ms);
  }

  private armIdleTimer(): void {
    clearTimeout(this.idleTimer);
    const ms = this.options.idleTimeoutMs;
    this.idleTimer = setTimeout(() => {
      this.write(formatSseComment(`no event for ${ms} ms; reconnect with Last-Event-ID ${this.next - 1}`));
      this.finish();
    }, ms);
  }

  private write(text: string): void {
    this.controller.enqueue(encoder.encode(text));
    clearTimeout(this.keepAliveTimer);
    this.keepAliveTimer = setTimeout(
      () => this.write(formatSseComment('keep-alive')),
      this.options.keepAliveMs ?? 15_000,
    );
  }

  /** Ends the relay and closes the stream. */
  private finish(): void {
    if (this.ended) return;
    this.end();
    this.controller.close();
    void this.closeSubscription();
  }

  private end(): void {
    this.ended = true;
    this.pending.clear();
    clearTimeout(this.startTimer);
    clearTimeout(this.idleTimer);
    clearTimeout(this.keepAliveTimer);
    clearTimeout(this.gapTimer);
    clearTimeout(this.quietTimer);
    this.options.onEnd?.();
  }

  private async closeSubscription(): Promise<void> {
    const subscription = this.subscription;
    this.subscription = undefined;
    try {
      await subscription?.close();
    } catch (error) {
      this.report(error);
    }
  }

  private report(error: unknown): void {
    this.options.onError?.(error);
  }
}

/**
 * Where a client resuming after `afterSeq` stands: `ended` when it already has the turn's terminal event (answer
 * 204, which also stops an EventSource from reconnecting), else `relay`. A resume point past the terminal event
 * is a ValidationError rather than a stream that would wait for events that never come.
 */
export async function resumePoint(
  store: TurnEventStore,
  turn: { sessionId: string; chatMessageId: string },
  afterSeq: number,
): Promise<'relay' | 'ended'> {
  if (afterSeq === 0) return 'relay';
  const [last] = await store.read(turn.sessionId, turn.chatMessageId, afterSeq - 1);
  if (last !== undefined) return last.seq === afterSeq && isTerminalEvent(last) ? 'ended' : 'relay';
  // Nothing at or after the resume point: the turn is still to come, or the client names an event it never had.
  const terminal = (await store.read(turn.sessionId, turn.chatMessageId, 0)).find(isTerminalEvent);
  if (terminal !== undefined && terminal.seq < afterSeq) {
    const message = `Last-Event-ID ${afterSeq} is past the end of this turn (its last event is ${terminal.seq}).`;
    throw new ValidationError(message, [{ path: 'Last-Event-ID', message }]);
  }
  return 'relay';
}
