import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';

import { FlushScheduler } from './flush-scheduler.js';

describe('FlushScheduler', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('saves a burst of changes once, no later than the delay after the first', async () => {
    let saves = 0;
    const scheduler = new FlushScheduler(
      () => Promise.resolve(void (saves += 1)),
      200,
      () => undefined,
    );
    scheduler.markDirty();
    await vi.advanceTimersByTimeAsync(150);
    scheduler.markDirty();
    scheduler.markDirty();
    expect(saves).toBe(0);
    await vi.advanceTimersByTimeAsync(50);
    expect(saves).toBe(1);
    await vi.advanceTimersByTimeAsync(1000);
    expect(saves).toBe(1);
  });

  it('never runs two saves at once, and flush() waits for the one under way', async () => {
    const events: string[] = [];
    let release: () => void = () => undefined;
    const scheduler = new FlushScheduler(
      async () => {
        events.push('start');
        await new Promise<void>((resolve) => (release = resolve));
        events.push('end');
      },
      10,
      () => undefined,
    );
    scheduler.markDirty();
    await vi.advanceTimersByTimeAsync(10);
    const flushed = scheduler.flush();
    await vi.advanceTimersByTimeAsync(0);
    expect(events).toEqual(['start']);
    release();
    await vi.advanceTimersByTimeAsync(0);
    release();
    await flushed;
    expect(events).toEqual(['start', 'end', 'start', 'end']);
  });

  it('reports a failed background save and keeps working', async () => {
    const errors: unknown[] = [];
    let fail = true;
    let saves = 0;
    const scheduler = new FlushScheduler(
      () => (fail ? Promise.reject(new Error('disk full')) : Promise.resolve(void (saves += 1))),
      10,
      (error) => errors.push(error),
    );
    scheduler.markDirty();
    await vi.advanceTimersByTimeAsync(10);
    expect(errors).toHaveLength(1);
    fail = false;
    await scheduler.flush();
    expect(saves).toBe(1);
  });

  it('cancel() drops a pending save', async () => {
    let saves = 0;
    const scheduler = new FlushScheduler(
      () => Promise.resolve(void (saves += 1)),
      10,
      () => undefined,
    );
    scheduler.markDirty();
    scheduler.cancel();
    await vi.advanceTimersByTimeAsync(100);
    expect(saves).toBe(0);
  });
});
