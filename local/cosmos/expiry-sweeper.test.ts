import { describe, expect, it } from 'vitest';

import { ContainerIndexes } from './container-indexes.js';
import {
  containers,
  createAccount,
  databases,
  findContainer,
  type AccountContainer,
} from './cosmosdb-server-internals.js';
import { observeAccount } from './cosmosdb-server-observer.js';
import { ExpirySweeper } from './expiry-sweeper.js';

/** A container whose account reports every change to `indexes`, as the local server's does. */
function containerWith(defaultTtl: number | undefined, indexes = new ContainerIndexes()): AccountContainer {
  const account = createAccount('localhost', 1);
  observeAccount(account, {
    changed: (change) => indexes.changed(change),
    partitionItems: () => undefined,
    queried: () => undefined,
  });
  databases(account).create({ id: 'db' });
  containers(account, 'db').create({ id: 'c', partitionKey: { paths: ['/pk'] }, defaultTtl });
  const container = findContainer(account, 'db', 'c');
  if (!container) throw new Error('no container db/c');
  return container;
}

/** Inserts a document as if written at `ts` (seconds). */
function put(container: AccountContainer, id: string, ts: number, ttl?: number): void {
  const created = container.documents.create({ id, pk: 'p', ...(ttl === undefined ? {} : { ttl }) });
  container.documents.remove(created);
  container.documents.insert({ ...created, _ts: ts });
}

const ids = (container: AccountContainer) => container.documents.list().map((document) => document.id);

describe('ExpirySweeper', () => {
  it('removes items whose time to live has passed and keeps the others', () => {
    const indexes = new ContainerIndexes();
    const container = containerWith(100, indexes);
    put(container, 'old', 1000);
    put(container, 'young', 1050);
    put(container, 'forever', 0, -1);
    let now = 1_100_000;
    const sweeper = new ExpirySweeper(() => now, indexes);
    expect(sweeper.sweepContainer(container)).toBe(1);
    expect(ids(container)).toEqual(['young', 'forever']);
    now = 1_150_000;
    expect(sweeper.sweepContainer(container)).toBe(1);
    expect(ids(container)).toEqual(['forever']);
  });

  it('sees every write at once, with no rescan: entries examined grow with expiries, not with the container', () => {
    const indexes = new ContainerIndexes();
    const container = containerWith(100, indexes);
    let now = 1_050_000;
    const sweeper = new ExpirySweeper(() => now, indexes);
    put(container, 'short', 1000, 10); // expired already: found without being told
    expect(sweeper.sweepContainer(container)).toBe(1);
    expect(indexes.expiryEntriesExamined).toBe(1);

    // Thousands of writes, each followed by a sweep as requests do: nothing is due, nothing is examined.
    for (let i = 0; i < 5000; i++) {
      put(container, `item-${i}`, 1040);
      expect(sweeper.sweepContainer(container)).toBe(0);
    }
    expect(indexes.expiryEntriesExamined).toBe(1);
    // Rewriting an item leaves a stale entry behind, skipped when its time comes; the new one still expires.
    const first = container.documents.list().find((document) => document.id === 'item-0')!;
    container.documents.insert({ ...first, _ts: 1045 });
    now = 1_141_000;
    expect(sweeper.sweepContainer(container)).toBe(4999);
    expect(indexes.expiryEntriesExamined).toBe(1 + 4999 + 1); // the stale entry of item-0 included

    now = 1_146_000;
    expect(sweeper.sweepContainer(container)).toBe(1);
    expect(indexes.expiryEntriesExamined).toBe(1 + 4999 + 1 + 1);
    expect(ids(container)).toEqual([]);
  });

  it('leaves containers without TTL alone, even items with their own ttl', () => {
    const indexes = new ContainerIndexes();
    const container = containerWith(undefined, indexes);
    put(container, 'a', 0, 1);
    expect(new ExpirySweeper(() => Date.now(), indexes).sweepContainer(container)).toBe(0);
    expect(ids(container)).toEqual(['a']);
  });
});
