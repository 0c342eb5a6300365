import { describe, expect, it } from 'vitest';

import {
  containers,
  createAccount,
  databases,
  findContainer,
  type AccountContainer,
} from './cosmosdb-server-internals.js';
import { ExpirySweeper } from './expiry-sweeper.js';

function containerWith(defaultTtl: number | undefined): AccountContainer {
  const account = createAccount('localhost', 1);
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
    const container = containerWith(100);
    put(container, 'old', 1000);
    put(container, 'young', 1050);
    put(container, 'forever', 0, -1);
    let now = 1_100_000;
    const sweeper = new ExpirySweeper(() => now);
    expect(sweeper.sweepContainer(container)).toBe(1);
    expect(ids(container)).toEqual(['young', 'forever']);
    now = 1_150_000;
    expect(sweeper.sweepContainer(container)).toBe(1);
    expect(ids(container)).toEqual(['forever']);
  });

  it('skips the scan until the earliest known expiry, unless told about a write', () => {
    const container = containerWith(100);
    put(container, 'a', 1000);
    const now = 1_050_000;
    const sweeper = new ExpirySweeper(() => now);
    expect(sweeper.sweepContainer(container)).toBe(0);
    put(container, 'short', 1000, 10); // already expired, but the sweeper was not told
    expect(sweeper.sweepContainer(container)).toBe(0);
    sweeper.invalidate(container);
    expect(sweeper.sweepContainer(container)).toBe(1);
    expect(ids(container)).toEqual(['a']);
  });

  it('leaves containers without TTL alone, even items with their own ttl', () => {
    const container = containerWith(undefined);
    put(container, 'a', 0, 1);
    expect(new ExpirySweeper(() => Date.now()).sweepContainer(container)).toBe(0);
    expect(ids(container)).toEqual(['a']);
  });
});
