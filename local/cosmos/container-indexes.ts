// What the local Cosmos DB keeps beside each container's documents, updated from every change the account reports:
// documents by partition key (partition-scoped queries) and by expiry time (TTL), so neither needs a scan.
import type { StoredResource } from './cosmosdb-server-internals.js';
import type { ResourceChange } from './cosmosdb-server-observer.js';
import { ExpirySchedule } from './expiry-schedule.js';
import { PartitionIndex } from './partition-index.js';
import { expiresAtMs } from './time-to-live.js';

interface ContainerIndex {
  settings: StoredResource;
  partitions: PartitionIndex;
  expiry: ExpirySchedule;
}

export class ContainerIndexes {
  /** By container `_rid`. */
  readonly #containers = new Map<string, ContainerIndex>();
  #examinedOfDropped = 0;

  /** Call with every change of the account (it is an AccountObserver's `changed`). */
  changed(change: ResourceChange): void {
    if (change.level === 'container') {
      this.#drop(change.resource._rid);
      // A stored container (created or replaced) starts empty: the package gives a replaced one new documents.
      if (change.kind === 'stored') this.#containers.set(change.resource._rid, newIndex(change.resource));
      return;
    }
    if (change.level !== 'document') return;
    const index = this.#containers.get(change.parents[1] ?? '');
    if (!index) return;
    const document = change.resource;
    if (change.kind === 'removed') {
      index.partitions.delete(document._rid);
      index.expiry.delete(document._rid);
    } else {
      index.partitions.set(document);
      index.expiry.set(document, expiresAtMs(index.settings['defaultTtl'], document));
    }
  }

  /** The container's documents in the partition the header names, or undefined when it cannot tell. */
  partitionItems(containerRid: string, partitionKeyHeader: string): StoredResource[] | undefined {
    return this.#containers.get(containerRid)?.partitions.lookup(partitionKeyHeader);
  }

  /** The container's documents that have expired at `now`; they are forgotten here, the caller removes them. */
  takeExpired(containerRid: string, now: number): StoredResource[] {
    const index = this.#containers.get(containerRid);
    if (!index || (index.expiry.nextAt ?? Number.POSITIVE_INFINITY) > now) return [];
    return index.expiry.takeExpired(now);
  }

  /** Expiry entries looked at so far, over all containers: grows with expiries, never with container size. */
  get expiryEntriesExamined(): number {
    let examined = this.#examinedOfDropped;
    for (const index of this.#containers.values()) examined += index.expiry.examined;
    return examined;
  }

  #drop(containerRid: string): void {
    const index = this.#containers.get(containerRid);
    if (!index) return;
    this.#examinedOfDropped += index.expiry.examined;
    this.#containers.delete(containerRid);
  }
}

function newIndex(settings: StoredResource): ContainerIndex {
  const paths = (settings['partitionKey'] as { paths?: unknown } | undefined)?.paths;
  const keyPaths = Array.isArray(paths) && paths.every((path) => typeof path === 'string') ? paths : [];
  return { settings, partitions: new PartitionIndex(keyPaths), expiry: new ExpirySchedule() };
}
