// Deletes expired documents from the in-memory account. Runs before each request that touches a container
// and on a light timer; it remembers each container's earliest expiry, so reads between writes cost O(1).
import { allContainers, type AccountContainer, type CosmosAccount } from './cosmosdb-server-internals.js';
import { containerHasTtl, expiresAtMs } from './time-to-live.js';

export class ExpirySweeper {
  /** Earliest expiry (epoch ms) among a container's documents as of its last scan, by container `_rid`. */
  private readonly nextExpiryMs = new Map<string, number>();

  constructor(private readonly now: () => number) {}

  /** Forget what is known about a container, after a write that may have added an earlier expiry. */
  invalidate(container: AccountContainer): void {
    this.nextExpiryMs.delete(container.settings._rid);
  }

  /** Removes the container's expired documents; returns how many. */
  sweepContainer(container: AccountContainer): number {
    const defaultTtl = container.settings['defaultTtl'];
    if (!containerHasTtl(defaultTtl)) return 0;
    const now = this.now();
    const known = this.nextExpiryMs.get(container.settings._rid);
    if (known !== undefined && now < known) return 0;

    const expired = [];
    let earliest = Number.POSITIVE_INFINITY;
    for (const document of container.documents.list()) {
      const expiresAt = expiresAtMs(defaultTtl, document);
      if (expiresAt === undefined) continue;
      if (now >= expiresAt) expired.push(document);
      else earliest = Math.min(earliest, expiresAt);
    }
    for (const document of expired) container.documents.remove(document);
    this.nextExpiryMs.set(container.settings._rid, earliest);
    return expired.length;
  }

  /** Sweeps every container of every database; returns how many documents were removed. */
  sweepAccount(account: CosmosAccount): number {
    let removed = 0;
    for (const container of allContainers(account)) removed += this.sweepContainer(container);
    return removed;
  }
}
