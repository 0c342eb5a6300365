import { describe, expect, it } from 'vitest';
import { GroupCommit } from './group-commit.js';

/** A write that records the state it saw when it started and finishes when the test says so. */
function controlledWrites(state: { value: number }) {
  const started: number[] = [];
  const finishers: ((error?: Error) => void)[] = [];
  const write = () =>
    new Promise<void>((resolve, reject) => {
      started.push(state.value);
      finishers.push((error) => (error ? reject(error) : resolve()));
    });
  return { started, finishers, write };
}

async function tick(): Promise<void> {
  for (let i = 0; i < 5; i += 1) await Promise.resolve();
}

describe('GroupCommit', () => {
  it('gives callers of the same moment one write', async () => {
    const state = { value: 1 };
    const { started, finishers, write } = controlledWrites(state);
    const group = new GroupCommit(write);
    const calls = [group.commit(), group.commit(), group.commit()];
    await tick();
    expect(started).toEqual([1]);
    finishers[0]!();
    await Promise.all(calls);
    expect(started).toEqual([1]);
  });

  it('makes callers that arrive during a write wait for one more write that holds their change', async () => {
    const state = { value: 1 };
    const { started, finishers, write } = controlledWrites(state);
    const group = new GroupCommit(write);
    let firstDone = false;
    void group.commit().then(() => (firstDone = true));
    await tick();
    state.value = 2;
    let laterDone = 0;
    const later = [group.commit(), group.commit()].map((p) => p.then(() => (laterDone += 1)));
    await tick();
    expect(started).toEqual([1]); // never two writes at once

    finishers[0]!();
    await tick();
    expect(firstDone).toBe(true);
    expect(laterDone).toBe(0);
    expect(started).toEqual([1, 2]);
    finishers[1]!();
    await Promise.all(later);
    expect(laterDone).toBe(2);
  });

  it('rejects the callers of a failed write and lets the next one try again', async () => {
    const state = { value: 1 };
    const { started, finishers, write } = controlledWrites(state);
    const group = new GroupCommit(write);
    const failed = group.commit();
    await tick();
    finishers[0]!(new Error('disk full'));
    await expect(failed).rejects.toThrow('disk full');

    const retried = group.commit();
    await tick();
    finishers[1]!();
    await expect(retried).resolves.toBeUndefined();
    expect(started).toEqual([1, 1]);
  });
});
