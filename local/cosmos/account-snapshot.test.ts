import { describe, expect, it } from 'vitest';

import { accountSnapshotSchema, restoreSnapshot, takeSnapshot } from './account-snapshot.js';
import { createAccount, type CosmosAccount } from './cosmosdb-server-internals.js';

function seededAccount(): CosmosAccount {
  const account = createAccount('localhost', 1);
  account.databases.create({ id: 'db' });
  const database = account.database('db');
  database.collections.create({ id: 'hot', partitionKey: { paths: ['/sessionId'] }, defaultTtl: 60 });
  const hot = database.collection('hot');
  hot.documents.create({ id: 'a', sessionId: 's1', text: 'kept' });
  hot.documents.create({ id: 'b', sessionId: 's1' });
  hot.documents.delete('b', 's1');
  return account;
}

describe('account snapshots', () => {
  it('round-trip through JSON with system properties, settings and rid counters', () => {
    const original = seededAccount();
    const snapshot = accountSnapshotSchema.parse(
      JSON.parse(JSON.stringify(takeSnapshot(original, new Date(0)))),
    );

    const restored = createAccount('localhost', 2);
    restoreSnapshot(restored, snapshot);

    const before = original.database('db').collection('hot');
    const after = restored.database('db').collection('hot');
    expect(after.read()).toEqual(before.read());
    expect(after.read()?.defaultTtl).toBe(60);
    const document = after.documents._data.values().next().value?.read();
    expect(document).toEqual(before.documents._data.values().next().value?.read());
    expect(document?._etag).toEqual(expect.any(String));
    expect(after.documents._ridCount).toBe(2); // the deleted item's rid is not handed out again
    expect(after.documents._data.size).toBe(1);
  });

  it('restores an index the package can look items up by', () => {
    const restored = createAccount('localhost', 2);
    restoreSnapshot(restored, takeSnapshot(seededAccount(), new Date(0)));
    const hot = restored.database('db').collection('hot');
    expect(hot.documents.create({ id: 'c', sessionId: 's1' })._rid).not.toBe(
      hot.documents._data.values().next().value?.read()?._rid,
    );
    expect(() => hot.documents.create({ id: 'a', sessionId: 's1' })).toThrow(/already exists/);
  });

  it('refuses to restore into an account that already holds data', () => {
    expect(() => restoreSnapshot(seededAccount(), takeSnapshot(seededAccount(), new Date(0)))).toThrow(
      /empty/,
    );
  });
});
