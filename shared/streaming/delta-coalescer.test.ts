import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { DeltaCoalescer, type CoalescingOptions, type DeltaKind } from './delta-coalescer.js';

interface Emission {
  kind: DeltaKind;
  text: string;
}

function coalescer(options: CoalescingOptions): { coalescer: DeltaCoalescer; emitted: Emission[] } {
  const emitted: Emission[] = [];
  return { coalescer: new DeltaCoalescer(options, (kind, text) => emitted.push({ kind, text })), emitted };
}

/** Joins neighbouring pieces of the same kind: what a reader of the stream sees, however it was cut. */
function joined(pieces: readonly Emission[]): Emission[] {
  const result: Emission[] = [];
  for (const piece of pieces) {
    const last = result.at(-1);
    if (last?.kind === piece.kind) last.text += piece.text;
    else if (piece.text !== '') result.push({ ...piece });
  }
  return result;
}

describe('DeltaCoalescer', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });

  afterEach(() => {
    vi.useRealTimers();
  });

  it('emits the first delta at once, then the rest together when the interval has passed', () => {
    const { coalescer: c, emitted } = coalescer({ flushIntervalMs: 50, flushMaxChars: 1000 });
    const deltas = Array.from({ length: 20 }, (_, i) => `t${i} `);

    c.push('content', deltas[0]!);
    expect(emitted).toEqual([{ kind: 'content', text: 't0 ' }]);
    for (const delta of deltas.slice(1)) c.push('content', delta);
    expect(emitted).toHaveLength(1);

    vi.advanceTimersByTime(50);
    expect(emitted).toHaveLength(2);
    expect(emitted.map((e) => e.text).join('')).toBe(deltas.join(''));
  });

  it('times the interval from the first buffered character, not from the last push', () => {
    const { coalescer: c, emitted } = coalescer({ flushIntervalMs: 50, flushMaxChars: 1000 });
    c.push('content', 'a');
    vi.advanceTimersByTime(10);
    c.push('content', 'b');
    vi.advanceTimersByTime(30);
    c.push('content', 'c');
    vi.advanceTimersByTime(19);
    expect(emitted.map((e) => e.text)).toEqual(['a']);

    vi.advanceTimersByTime(1);
    expect(emitted.map((e) => e.text)).toEqual(['a', 'bc']);
    vi.advanceTimersByTime(500);
    expect(emitted).toHaveLength(2);
  });

  it('emits as soon as the buffer reaches the size threshold', () => {
    const { coalescer: c, emitted } = coalescer({ flushIntervalMs: 1000, flushMaxChars: 10 });
    for (let i = 0; i < 9; i++) c.push('content', 'abc');

    // 'abc' at once; then every fourth 'abc' takes the buffer to 12 ≥ 10 characters, and nothing is left over.
    expect(emitted.map((e) => e.text)).toEqual(['abc', 'abcabcabcabc', 'abcabcabcabc']);
    vi.advanceTimersByTime(1000);
    expect(emitted.map((e) => e.text)).toEqual(['abc', 'abcabcabcabc', 'abcabcabcabc']);

    c.push('content', 'xy');
    vi.advanceTimersByTime(999);
    expect(emitted).toHaveLength(3);
    vi.advanceTimersByTime(1);
    expect(emitted.at(-1)).toEqual({ kind: 'content', text: 'xy' });
  });

  it('bounds the number of emissions for many deltas to about one per threshold', () => {
    const { coalescer: c, emitted } = coalescer({ flushIntervalMs: 50, flushMaxChars: 100 });
    const deltas = Array.from({ length: 1000 }, (_, i) => String(i % 10));
    for (const delta of deltas) c.push('content', delta);
    c.flush();

    // The first delta alone, then 999 characters: nine full buffers of 100 and a remainder of 99.
    expect(emitted).toHaveLength(1 + 9 + 1);
    expect(emitted.map((e) => e.text).join('')).toBe(deltas.join(''));
  });

  it('emits the first delta of each kind at once and keeps the order across kinds', () => {
    const { coalescer: c, emitted } = coalescer({ flushIntervalMs: 50, flushMaxChars: 1000 });
    c.push('reasoning', 'think ');
    c.push('reasoning', 'more ');
    c.push('reasoning', 'still ');
    c.push('content', 'Hello');
    c.push('content', ' world');
    c.push('reasoning', 'again');
    c.flush();

    expect(emitted).toEqual([
      { kind: 'reasoning', text: 'think ' },
      { kind: 'reasoning', text: 'more still ' },
      { kind: 'content', text: 'Hello' },
      { kind: 'content', text: ' world' },
      { kind: 'reasoning', text: 'again' },
    ]);
  });

  it('ignores empty text, which does not count as a first delta', () => {
    const { coalescer: c, emitted } = coalescer({ flushIntervalMs: 50, flushMaxChars: 1000 });
    c.push('content', '');
    c.push('content', 'a');
    c.push('content', '');
    c.push('reasoning', '');
    vi.advanceTimersByTime(100);
    c.flush();
    expect(emitted).toEqual([{ kind: 'content', text: 'a' }]);
  });

  it('emits every delta when the interval is 0', () => {
    const { coalescer: c, emitted } = coalescer({ flushIntervalMs: 0, flushMaxChars: 1000 });
    for (const text of ['a', 'b', 'c']) c.push('content', text);
    c.push('reasoning', 'r');
    expect(emitted).toEqual([
      { kind: 'content', text: 'a' },
      { kind: 'content', text: 'b' },
      { kind: 'content', text: 'c' },
      { kind: 'reasoning', text: 'r' },
    ]);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('flushes synchronously and cancels the pending timer', () => {
    const { coalescer: c, emitted } = coalescer({ flushIntervalMs: 50, flushMaxChars: 1000 });
    c.push('content', 'a');
    c.push('content', 'b');
    expect(vi.getTimerCount()).toBe(1);
    c.flush();
    expect(emitted.map((e) => e.text)).toEqual(['a', 'b']);
    expect(vi.getTimerCount()).toBe(0);
    c.flush();
    vi.advanceTimersByTime(100);
    expect(emitted).toHaveLength(2);
  });

  it('keeps every character and the order of kinds for any cut of the input', () => {
    let seed = 42;
    const random = () => (seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31;
    const { coalescer: c, emitted } = coalescer({ flushIntervalMs: 20, flushMaxChars: 16 });
    const pushed: Emission[] = [];
    for (let i = 0; i < 500; i++) {
      const kind: DeltaKind = random() < 0.2 ? 'reasoning' : 'content';
      const text = 'xyzéw'.slice(0, Math.floor(random() * 6));
      pushed.push({ kind, text });
      c.push(kind, text);
      vi.advanceTimersByTime(Math.floor(random() * 8));
    }
    c.flush();

    expect(emitted.every((e) => e.text !== '')).toBe(true);
    expect(joined(emitted)).toEqual(joined(pushed));
    expect(emitted.length).toBeLessThan(pushed.filter((p) => p.text !== '').length);
  });
});

describe('DeltaCoalescer with injected timers', () => {
  it('schedules and cancels through the timers it is given', () => {
    const scheduled: { callback: () => void; ms: number | undefined; cancelled: boolean }[] = [];
    const timers = {
      setTimeout: ((callback: () => void, ms?: number) => {
        scheduled.push({ callback, ms, cancelled: false });
        return scheduled.length;
      }) as unknown as typeof setTimeout,
      clearTimeout: ((handle: number) => {
        scheduled[handle - 1]!.cancelled = true;
      }) as unknown as typeof clearTimeout,
    };
    const emitted: string[] = [];
    const c = new DeltaCoalescer(
      { flushIntervalMs: 30, flushMaxChars: 100 },
      (_, text) => emitted.push(text),
      timers,
    );

    c.push('content', 'a');
    c.push('content', 'b');
    c.push('content', 'c');
    expect(scheduled.map((s) => s.ms)).toEqual([30]);
    scheduled[0]!.callback();
    expect(emitted).toEqual(['a', 'bc']);

    c.push('content', 'd');
    c.flush();
    expect(scheduled.map((s) => s.cancelled)).toEqual([false, true]);
    expect(emitted).toEqual(['a', 'bc', 'd']);
  });
});
