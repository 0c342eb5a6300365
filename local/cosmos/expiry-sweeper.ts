// Deletes expired documents from the in-memory account. Runs before each request that touches a container and on
// a light timer; it asks the containers' expiry schedules, so a sweep with nothing due costs O(1) and a write never
// causes a rescan.
import { allContainers, type AccountContainer, type CosmosAccount } from './cosmosdb-server-internals.js';
import type { ContainerIndexes } from './container-indexes.js';
import { containerHasTtl } from './time-to-live.js';

export class ExpirySweeper {
  constructor(
    private readonly now: () => number,
    private readonly indexes: ContainerIndexes,
  ) {}

  /** Removes the container's expired documents; returns how many. */
  sweepContainer(container: AccountContainer): number {
    if (!containerHasTtl(container.settings['defaultTtl'])) return 0;
    const expired = this.indexes.takeExpired(container.settings._rid, this.now());
    for (const document of expired) container.documents.remove(document);
    return expired.length;
  }

  /** Sweeps every container of every database; returns how many documents were removed. */
  sweepAccount(account: CosmosAccount): number {
    let removed = 0;
    for (const container of allContainers(account)) removed += this.sweepContainer(container);
    return removed;
  }
}
