// Runs a piece of work for each of many items with at most `limit` in flight, so deleting a long conversation's
// items or purging its turns neither runs one at a time nor floods the store with thousands of requests at once.

/**
 * Resolves with every item's result, in the items' order, once every item's work has; the first failure rejects
 * (work already started is left to finish).
 */
export async function mapBounded<T, R>(
  items: readonly T[],
  limit: number,
  work: (item: T) => Promise<R>,
): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const lane = async (): Promise<void> => {
    while (next < items.length) {
      const index = next++;
      results[index] = await work(items[index] as T);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, lane));
  return results;
}
