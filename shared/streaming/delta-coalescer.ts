// Coalesces a turn's text deltas into fewer, larger ones: Web PubSub bills per message, and one
// message per token is wasteful. The first delta of each kind goes out at once, so coalescing adds nothing to
// the time to first token; later text is held until the buffer is full or a short timer fires.

export interface CoalescingOptions {
  /** Buffered text is emitted at most this long after its first character; 0 = emit every delta as it comes. */
  flushIntervalMs: number;
  /** Buffered text is emitted as soon as it holds this many characters. */
  flushMaxChars: number;
}

export type DeltaKind = 'content' | 'reasoning';

export interface CoalescerTimers {
  setTimeout: typeof setTimeout;
  clearTimeout: typeof clearTimeout;
}

export class DeltaCoalescer {
  readonly #options: CoalescingOptions;
  readonly #emit: (kind: DeltaKind, text: string) => void;
  /** Undefined = the global timers, looked up at each use (so a test's fake timers apply). */
  readonly #timers: CoalescerTimers | undefined;
  /** Kinds whose first delta has gone out. */
  readonly #started = new Set<DeltaKind>();
  #bufferKind: DeltaKind | undefined;
  #buffer = '';
  #timer: ReturnType<typeof setTimeout> | undefined;

  constructor(
    options: CoalescingOptions,
    emit: (kind: DeltaKind, text: string) => void,
    timers?: CoalescerTimers,
  ) {
    this.#options = options;
    this.#emit = emit;
    this.#timers = timers;
  }

  push(kind: DeltaKind, text: string): void {
    if (text === '') return;
    if (this.#bufferKind !== kind) this.flush();
    if (this.#options.flushIntervalMs === 0 || !this.#started.has(kind)) {
      this.#started.add(kind);
      this.#emit(kind, text);
      return;
    }
    this.#bufferKind = kind;
    this.#buffer += text;
    if (this.#buffer.length >= this.#options.flushMaxChars) this.flush();
    else this.#timer ??= this.#clock().setTimeout(() => this.#onTimer(), this.#options.flushIntervalMs);
  }

  /** Emits whatever is buffered, synchronously. */
  flush(): void {
    if (this.#timer !== undefined) {
      this.#clock().clearTimeout(this.#timer);
      this.#timer = undefined;
    }
    const kind = this.#bufferKind;
    const text = this.#buffer;
    this.#bufferKind = undefined;
    this.#buffer = '';
    if (kind !== undefined && text !== '') this.#emit(kind, text);
  }

  #clock(): CoalescerTimers {
    return this.#timers ?? globalThis;
  }

  #onTimer(): void {
    this.#timer = undefined;
    this.flush();
  }
}
