// Deletes expired documents from the in-memory account. Runs before each request that touches a container
// and on a light timer; it remembers each container's earliest expiry, so reads between writes cost O(1).
import { storedResources, type CollectionNode, type CosmosAccount } from './cosmosdb-server-internals.js';
import { containerHasTtl, expiresAtMs } from './time-to-live.js';

export class ExpirySweeper {
  /** Earliest expiry (epoch ms) among a container's documents as of its last scan; absent = scan needed. */
  private readonly nextExpiryMs = new WeakMap<CollectionNode, number>();

  constructor(private readonly now: () => number) {}

  /** Forget what is known about a container, after a write that may have added an earlier expiry. */
  invalidate(container: CollectionNode): void {
    this.nextExpiryMs.delete(container);
  }

  /** Removes the container's expired documents; returns how many. */
  sweepContainer(container: CollectionNode): number {
    const defaultTtl = container.read()?.defaultTtl;
    if (!containerHasTtl(defaultTtl)) return 0;
    const now = this.now();
    const known = this.nextExpiryMs.get(container);
    if (known !== undefined && now < known) return 0;

    const expired: { id: string; partition: unknown }[] = [];
    let earliest = Number.POSITIVE_INFINITY;
    for (const [, document] of storedResources(container.documents)) {
      const expiresAt = expiresAtMs(defaultTtl, document);
      if (expiresAt === undefined) continue;
      if (now >= expiresAt) {
        expired.push({ id: document.id, partition: container.documents._getPartition(document) });
      } else {
        earliest = Math.min(earliest, expiresAt);
      }
    }
    for (const { id, partition } of expired) container.documents.delete(id, partition);
    this.nextExpiryMs.set(container, earliest);
    return expired.length;
  }

  /** Sweeps every container of every database; returns how many documents were removed. */
  sweepAccount(account: CosmosAccount): number {
    let removed = 0;
    for (const [database] of storedResources(account.databases)) {
      for (const [container] of storedResources(database.collections))
        removed += this.sweepContainer(container);
    }
    return removed;
  }
}
