// Time to live as Azure Cosmos DB applies it, which @vercel/cosmosdb-server does not: a container's `defaultTtl`
// turns expiry on (-1 = only items with their own `ttl` expire) and an item's `ttl` overrides it (-1 = never).

/** Seconds an item lives after its last write (`_ts`), or undefined when it never expires. */
export function effectiveTtlSeconds(containerDefaultTtl: unknown, itemTtl: unknown): number | undefined {
  if (!isTtl(containerDefaultTtl)) return undefined; // TTL off for the container: item `ttl` is ignored
  if (isTtl(itemTtl)) return itemTtl === -1 ? undefined : itemTtl;
  return containerDefaultTtl === -1 ? undefined : containerDefaultTtl;
}

/** When an item expires, in epoch milliseconds, or undefined when it never does. */
export function expiresAtMs(
  containerDefaultTtl: unknown,
  item: { _ts?: unknown; ttl?: unknown },
): number | undefined {
  const ttl = effectiveTtlSeconds(containerDefaultTtl, item.ttl);
  if (ttl === undefined || typeof item._ts !== 'number') return undefined;
  return (item._ts + ttl) * 1000;
}

/** Whether a container has expiry turned on at all (so sweeping it can be skipped otherwise). */
export function containerHasTtl(containerDefaultTtl: unknown): boolean {
  return isTtl(containerDefaultTtl);
}

function isTtl(value: unknown): value is number {
  return typeof value === 'number' && Number.isInteger(value) && (value === -1 || value > 0);
}
