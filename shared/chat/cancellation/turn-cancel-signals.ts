// How a running turn learns that its owner stopped it. The stop is recorded durably (TurnCancellations), so every
// instance can see it; the instance that took the request also aborts, at once, a model stream of that turn open in
// its own process.
import type { TurnRef } from '../../conversation/messages.js';
import type { TurnCancellations } from './turn-cancellations.js';

export interface TurnCancelSignalsOptions {
  /** How often an open model stream reads the record (CHAT_CANCEL_POLL_MS). */
  pollIntervalMs: number;
  /** Milliseconds, for the stats; performance.now by default. */
  now?: () => number;
  /**
   * Whether the turn's conversation is being deleted or was (its tombstone): read by each poll beside the stop's
   * record, since the delete purges that record with the rest of the turn's data.
   */
  isDeleted?: (ref: TurnRef) => Promise<boolean>;
}

/** A model stream being watched: `signal` aborts when the turn is stopped; close() when the stream ends. */
export interface CancelWatch {
  readonly signal: AbortSignal;
  close(): void;
}

/** What the watching cost and did in this process since it started (for operators and the benchmark). */
export interface CancelSignalStats {
  /** Model streams watched, and their total time open (ms). */
  watches: number;
  watchedMs: number;
  /** Point reads made while a stream was open. */
  polls: number;
  /** Streams aborted by a request taken in this process, and by a record a poll found. */
  stoppedHere: number;
  stoppedByPoll: number;
}

/**
 * A stream open in another process finds the record by a point read once per poll interval, and only while the
 * stream is open; the turn's steps read it once before each model round and each tool call. One object per process
 * (the composition root makes it), shared by the cancel and delete endpoints and the steps.
 */
export class TurnCancelSignals {
  readonly #store: TurnCancellations;
  readonly #pollIntervalMs: number;
  readonly #now: () => number;
  readonly #isDeleted: (ref: TurnRef) => Promise<boolean>;
  /** The turns with a model stream open in this process, by turn. */
  readonly #open = new Map<string, Set<AbortController>>();
  readonly #stats: CancelSignalStats = {
    watches: 0,
    watchedMs: 0,
    polls: 0,
    stoppedHere: 0,
    stoppedByPoll: 0,
  };

  constructor(store: TurnCancellations, options: TurnCancelSignalsOptions) {
    this.#store = store;
    this.#pollIntervalMs = options.pollIntervalMs;
    this.#now = options.now ?? (() => performance.now());
    this.#isDeleted = options.isDeleted ?? (() => Promise.resolve(false));
  }

  /**
   * Records the stop, then aborts the turn's model stream if one is open in this process. Recorded first, so a
   * stream that is aborted here and a step that starts elsewhere agree that the turn was stopped.
   */
  async request(ref: TurnRef, requestedAt: string): Promise<void> {
    await this.#store.request(ref, requestedAt);
    for (const controller of this.#open.get(turnKey(ref)) ?? []) {
      if (controller.signal.aborted) continue;
      this.#stats.stoppedHere += 1;
      controller.abort(new Error('The turn was stopped by its owner.'));
    }
  }

  /**
   * Aborts at once every model stream of the session open in this process (its conversation is being deleted);
   * streams open elsewhere find the tombstone at their next poll. Returns how many were aborted.
   */
  stopSession(sessionId: string): number {
    let stopped = 0;
    for (const [key, open] of this.#open) {
      if (!key.startsWith(`${sessionId}/`)) continue;
      for (const controller of open) {
        if (controller.signal.aborted) continue;
        stopped += 1;
        this.#stats.stoppedHere += 1;
        controller.abort(new Error('The conversation was deleted.'));
      }
    }
    return stopped;
  }

  /** Whether the turn's owner asked to stop it (one point read). */
  isRequested(ref: TurnRef): Promise<boolean> {
    return this.#store.isRequested(ref);
  }

  /**
   * Watches the turn while one model stream of it is open. From now on a stop taken in this process aborts it at
   * once; a stop recorded before (since the step's own check, while it prepared the round, and nothing here could
   * signal it yet) or elsewhere is found by the reads: the first as the watch starts, beside the model's request,
   * then each an interval after the previous answered, so a slow store never stacks reads. A read that fails is
   * reported and the next one tried. Each read is of the stop's record and of the conversation's tombstone.
   * `checkedAt` (epoch ms), when the step read both itself just before: the first read comes an interval after
   * that check instead of at once, so a stream that ends within the interval costs no read at all.
   */
  watch(
    ref: TurnRef,
    onReadError?: (error: unknown) => void,
    options: { checkedAt?: number } = {},
  ): CancelWatch {
    const key = turnKey(ref);
    const controller = new AbortController();
    const open = this.#open.get(key) ?? new Set<AbortController>();
    this.#open.set(key, open);
    open.add(controller);
    this.#stats.watches += 1;
    const startedAt = this.#now();
    let closed = false;
    let timer: ReturnType<typeof setTimeout> | undefined;

    const poll = async () => {
      timer = undefined;
      this.#stats.polls += 1;
      try {
        const found = await Promise.all([this.#store.isRequested(ref), this.#isDeleted(ref)]);
        const requested = found.some(Boolean);
        if (requested && !closed && !controller.signal.aborted) {
          this.#stats.stoppedByPoll += 1;
          controller.abort(new Error('The turn was stopped by its owner.'));
        }
      } catch (error) {
        // After close() the step has moved on, and so has its logger.
        if (!closed) onReadError?.(error);
      }
      schedule();
    };
    const schedule = () => {
      if (closed || controller.signal.aborted) return;
      timer = setTimeout(() => void poll(), this.#pollIntervalMs);
    };
    if (options.checkedAt === undefined) void poll();
    else {
      const sinceCheck = Math.max(0, Date.now() - options.checkedAt);
      timer = setTimeout(() => void poll(), Math.max(0, this.#pollIntervalMs - sinceCheck));
    }

    return {
      signal: controller.signal,
      close: () => {
        if (closed) return;
        closed = true;
        clearTimeout(timer);
        open.delete(controller);
        if (open.size === 0 && this.#open.get(key) === open) this.#open.delete(key);
        this.#stats.watchedMs += this.#now() - startedAt;
      },
    };
  }

  stats(): CancelSignalStats {
    return { ...this.#stats };
  }
}

function turnKey(ref: TurnRef): string {
  return `${ref.sessionId}/${ref.chatMessageId}`;
}
