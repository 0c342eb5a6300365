// mapBounded: every item once, never more than the limit at a time, results in order, and the first failure
// reported once the work under way has finished, with nothing started after it.
import { describe, expect, it } from 'vitest';
import { mapBounded } from './bounded-parallel.js';

describe('mapBounded', () => {
  it('does every item once with at most `limit` in flight', async () => {
    let inFlight = 0;
    let most = 0;
    const done: number[] = [];
    const results = await mapBounded([1, 2, 3, 4, 5, 6, 7], 3, async (item) => {
      inFlight += 1;
      most = Math.max(most, inFlight);
      await new Promise((resolve) => setTimeout(resolve, item % 3));
      done.push(item);
      inFlight -= 1;
      return item * 10;
    });
    expect(done.sort()).toEqual([1, 2, 3, 4, 5, 6, 7]);
    expect(results).toEqual([10, 20, 30, 40, 50, 60, 70]);
    expect(most).toBe(3);
    await mapBounded([], 4, () => Promise.reject(new Error('never called')));
  });

  it('rejects with the first failure', async () => {
    await expect(
      mapBounded([1, 2, 3], 2, (item) =>
        item === 2 ? Promise.reject(new Error('item 2 failed')) : Promise.resolve(),
      ),
    ).rejects.toThrow('item 2 failed');
  });

  it('starts nothing after a failure, and rejects only once the work under way has finished', async () => {
    const started: number[] = [];
    let slowDone = false;
    await expect(
      mapBounded([1, 2, 3, 4, 5], 2, async (item) => {
        started.push(item);
        if (item === 1) {
          await new Promise((resolve) => setTimeout(resolve, 20));
          slowDone = true;
          return;
        }
        throw new Error(`item ${item} failed`);
      }),
    ).rejects.toThrow('item 2 failed');
    expect(slowDone).toBe(true);
    expect(started).toEqual([1, 2]);
  });
});
