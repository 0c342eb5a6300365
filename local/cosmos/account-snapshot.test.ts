import { describe, expect, it } from 'vitest';

import { accountSnapshotSchema, restoreSnapshot, takeSnapshot } from './account-snapshot.js';
import {
  containers,
  createAccount,
  databases,
  findContainer,
  type AccountContainer,
  type CosmosAccount,
} from './cosmosdb-server-internals.js';

function seededAccount(): CosmosAccount {
  const account = createAccount('localhost', 1);
  databases(account).create({ id: 'db' });
  containers(account, 'db').create({ id: 'hot', partitionKey: { paths: ['/sessionId'] }, defaultTtl: 60 });
  const hot = hotContainer(account);
  hot.documents.create({ id: 'a', sessionId: 's1', text: 'kept' });
  hot.documents.remove(hot.documents.create({ id: 'b', sessionId: 's1' }));
  return account;
}

function hotContainer(account: CosmosAccount): AccountContainer {
  const container = findContainer(account, 'db', 'hot');
  if (!container) throw new Error('no container db/hot');
  return container;
}

describe('account snapshots', () => {
  it('round-trip through JSON with system properties, settings and rid counters', () => {
    const original = seededAccount();
    const snapshot = accountSnapshotSchema.parse(
      JSON.parse(JSON.stringify(takeSnapshot(original, new Date(0)))),
    );

    const restored = createAccount('localhost', 2);
    restoreSnapshot(restored, snapshot);

    const before = hotContainer(original);
    const after = hotContainer(restored);
    expect(after.settings).toEqual(before.settings);
    expect(after.settings['defaultTtl']).toBe(60);
    const document = after.documents.list()[0];
    expect(document).toEqual(before.documents.list()[0]);
    expect(document?._etag).toEqual(expect.any(String));
    expect(after.documents.ridCount).toBe(2); // the deleted item's rid is not handed out again
    expect(after.documents.size).toBe(1);
  });

  it('restores an index the package can look items up by', () => {
    const restored = createAccount('localhost', 2);
    restoreSnapshot(restored, takeSnapshot(seededAccount(), new Date(0)));
    const hot = hotContainer(restored);
    expect(hot.documents.create({ id: 'c', sessionId: 's1' })._rid).not.toBe(hot.documents.list()[0]?._rid);
    expect(() => hot.documents.create({ id: 'a', sessionId: 's1' })).toThrow(/already exists/);
  });

  it('refuses to restore into an account that already holds data', () => {
    expect(() => restoreSnapshot(seededAccount(), takeSnapshot(seededAccount(), new Date(0)))).toThrow(
      /empty/,
    );
  });
});
