// What an activity uses to publish its part of a turn's event stream: ids and seq stamped, text coalesced,
// and batches stored before they are sent live, so no client ever sees an event the log lacks.
import { AppError, DependencyError, ensureError } from '../errors.js';
import type { ChatEvent, ChatEventBody } from './contracts.js';
import { DeltaCoalescer, type CoalescingOptions, type DeltaKind } from './delta-coalescer.js';
import type { TurnEventSink } from './turn-event-sink.js';
import type { TurnEventStore } from './turn-event-store.js';

export interface TurnStreamOptions {
  userId: string;
  sessionId: string;
  chatMessageId: string;
  /** seq of the first event this stream emits (the orchestration passes it on between activities). */
  firstSeq: number;
  store: TurnEventStore;
  sink: TurnEventSink;
  coalescing: CoalescingOptions;
  /**
   * A live send failed. The events are stored, so clients still get them from the log (the SSE relay fills
   * gaps from it); the turn goes on.
   */
  onSendError?: (error: unknown) => void;
  /** Live sends wait for this one (an event the step sent before opening the stream), so seq order holds. */
  sendAfter?: Promise<void>;
}

export class TurnStream {
  /** Events emitted so far (stamped), for the activity's own bookkeeping. */
  readonly emitted: readonly ChatEvent[];
  readonly #options: TurnStreamOptions;
  readonly #coalescer: DeltaCoalescer;
  readonly #events: ChatEvent[] = [];
  /** Emitted events not yet taken into a batch. */
  #queue: ChatEvent[] = [];
  /** The store loop, while it runs. */
  #delivery: Promise<void> | undefined;
  /** Live sends, chained so they go out in seq order while the next batch is being stored. */
  #sending: Promise<void> = Promise.resolve();
  #failure: AppError | undefined;
  #nextSeq: number;
  #closed = false;

  constructor(options: TurnStreamOptions) {
    this.#options = options;
    this.#nextSeq = options.firstSeq;
    if (options.sendAfter) this.#sending = options.sendAfter.catch(() => undefined);
    this.emitted = this.#events;
    this.#coalescer = new DeltaCoalescer(options.coalescing, (kind, text) =>
      this.#publish(deltaBody(kind, text)),
    );
  }

  /**
   * Stamps sessionId, chatMessageId and the next seq on the event; content/reasoning-delta bodies go through
   * the coalescer (the coalesced text becomes one event); any other body first flushes the coalescer.
   */
  emit(body: ChatEventBody): void {
    if (this.#closed) throw new Error('This turn stream is closed: nothing more can be emitted.');
    if (body.type === 'content') this.#coalescer.push('content', body.delta);
    else if (body.type === 'reasoning-delta') this.#coalescer.push('reasoning', body.delta);
    else {
      this.#coalescer.flush();
      this.#publish(body);
    }
  }

  /** seq the next emitted event will get (after close(): the first seq of the next activity). */
  get nextSeq(): number {
    return this.#nextSeq;
  }

  /** Resolves when every event emitted so far is stored and sent, without flushing held text. */
  async settle(): Promise<void> {
    while (this.#delivery) await this.#delivery;
    await this.#sending;
    if (this.#failure) throw this.#failure;
  }

  /** Flushes, then resolves when every event is stored and sent; rejects with the first store failure. */
  async close(): Promise<void> {
    if (!this.#closed) this.#coalescer.flush();
    this.#closed = true;
    await this.settle();
  }

  #publish(body: ChatEventBody): void {
    const { sessionId, chatMessageId } = this.#options;
    const event: ChatEvent = { ...body, sessionId, chatMessageId, seq: this.#nextSeq++ };
    this.#events.push(event);
    if (this.#failure) return;
    this.#queue.push(event);
    this.#delivery ??= this.#deliver();
  }

  /** Stores batches until the queue is empty, handing each stored batch to the live send chain. */
  async #deliver(): Promise<void> {
    const { store, sink, userId, sessionId } = this.#options;
    try {
      // Starting a microtask later lets events emitted in the same synchronous run travel together.
      await Promise.resolve();
      while (this.#queue.length > 0) {
        const batch = this.#queue;
        this.#queue = [];
        await store.append(batch);
        this.#sending = this.#sending.then(() =>
          sink
            .send({ userId, sessionId }, batch)
            .catch((error: unknown) => this.#options.onSendError?.(error)),
        );
      }
    } catch (error) {
      this.#failure = toAppError(error, this.#options.chatMessageId);
      this.#queue = [];
    } finally {
      this.#delivery = undefined;
    }
  }
}

function deltaBody(kind: DeltaKind, delta: string): ChatEventBody {
  return kind === 'content' ? { type: 'content', delta } : { type: 'reasoning-delta', delta };
}

function toAppError(error: unknown, chatMessageId: string): AppError {
  if (error instanceof AppError) return error;
  return new DependencyError(
    'turnEvents',
    `Storing the events of turn '${chatMessageId}' failed: ${ensureError(error).message}`,
    { cause: error },
  );
}
