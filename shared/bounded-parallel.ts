// Runs a piece of work for each of many items with at most `limit` in flight, so deleting a long conversation's
// items or purging its turns neither runs one at a time nor floods the store with thousands of requests at once.

/**
 * Resolves with every item's result, in the items' order, once every item's work has. After a failure no further
 * item is started, and the first failure rejects once the work already under way has finished: when the caller
 * goes on (to clean up after the failure, say), none of this work is still running or yet to start.
 */
export async function mapBounded<T, R>(
  items: readonly T[],
  limit: number,
  work: (item: T) => Promise<R>,
): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  let failed: { error: unknown } | undefined;
  const lane = async (): Promise<void> => {
    while (failed === undefined && next < items.length) {
      const index = next++;
      try {
        results[index] = await work(items[index] as T);
      } catch (error) {
        failed ??= { error };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, lane));
  if (failed !== undefined) throw failed.error;
  return results;
}
