// ERASE_USAGE_RECORDS=keep-anonymised: before the erase sweeps the user's partition, each record of model calls is
// copied to a partition no request can name, its user, conversation and turn replaced by one-way hashes.
import { createHash } from 'node:crypto';
import type { Database } from '@azure/cosmos';
import { USAGE_CONTAINER } from '../usage/contracts.js';

/** Prefix of an anonymised partition: `:` is outside every user id's alphabet, so no caller can ever name it. */
export const ANONYMISED_PREFIX = 'erased:';

/** A one-way hash: the same user's records stay together, and nothing leads back to the user id. */
function hashed(value: string): string {
  return createHash('sha256').update(value, 'utf8').digest('hex').slice(0, 32);
}

/** Copies the user's usage records, anonymised; the erase's sweep then deletes the originals. How many. */
export async function anonymiseUsage(database: Database, userId: string): Promise<number> {
  const container = database.container(USAGE_CONTAINER);
  const { resources } = await container.items
    .query<Record<string, unknown>>(
      {
        query: "SELECT * FROM c WHERE c.userId = @userId AND (c.type = 'usage' OR c.type = 'call')",
        parameters: [{ name: '@userId', value: userId }],
      },
      { partitionKey: userId },
    )
    .fetchAll();
  for (const record of resources) {
    const { id, sessionId, turnId, ttl, _ts, ...kept } = record;
    const copy: Record<string, unknown> = {
      ...Object.fromEntries(Object.entries(kept).filter(([key]) => !key.startsWith('_'))),
      id: hashed(String(id)),
      userId: `${ANONYMISED_PREFIX}${hashed(userId)}`,
      ...(typeof sessionId === 'string' ? { sessionId: hashed(sessionId) } : {}),
      // The record keeps the rest of its life, counted from when it was written.
      ...(typeof ttl === 'number' && typeof _ts === 'number'
        ? { ttl: Math.max(1, ttl - Math.floor(Date.now() / 1000 - _ts)) }
        : {}),
    };
    delete copy.library;
    void turnId; // a turn id is the client's, and could name the user: it is left out
    // Upserted under a hash of the original id: an erase run again writes the same copy.
    await container.items.upsert(copy);
  }
  return resources.length;
}
