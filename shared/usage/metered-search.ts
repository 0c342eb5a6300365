// A search made for a user outside any turn (REST and MCP): admitted on the user's spend and search rate, and its
// query's embedding recorded under the user as a job of its own. A search inside a turn is counted with the turn.
import { randomUUID } from 'node:crypto';
import type { Logger } from '../logger.js';
import type { QuotaCaller, QuotaServices } from '../quota/quota-gate.js';
import { admitSearch, type SearchQuota } from '../quota/search-rate.js';
import { withUsage } from './usage-scope.js';

/** Runs one search's work once admitted (or throws QuotaExceededError), its model calls recorded under the caller. */
export async function meteredSearch<T>(
  quota: QuotaServices & SearchQuota,
  caller: QuotaCaller,
  log: Pick<Logger, 'log'> | undefined,
  work: () => Promise<T>,
): Promise<T> {
  await admitSearch(quota, caller);
  // Each search is its own job: nothing runs it again, and no other search may take its place.
  const job = `search:${randomUUID()}`;
  return withUsage(
    { userId: caller.userId, job, ownRecord: true, kind: 'embedding', ...(log ? { log } : {}) },
    work,
  );
}
