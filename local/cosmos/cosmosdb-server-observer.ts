// Every change of the local Cosmos DB's in-memory account, reported as it happens (for the journal and the
// indexes), journalled changes replayed into it, and partition-scoped queries and point reads, by hooking the
// package's resource stores on the instance.
import { AsyncLocalStorage } from 'node:async_hooks';
import {
  nodeOf,
  ridOf,
  stored,
  type AccountNode,
  type CollectionNode,
  type CosmosAccount,
  type DatabaseNode,
  type ItemStore,
  type QueryOptions,
  type QueryParams,
  type ResourceNode,
  type StoredResource,
} from './cosmosdb-server-internals.js';
import { valueAt } from './document-path.js';

export type ResourceLevel = 'database' | 'container' | 'document';

/** A database, container or document stored (created, replaced, upserted, patched) or removed. */
export interface ResourceChange {
  kind: 'stored' | 'removed';
  level: ResourceLevel;
  /** The `_rid`s of the database and container holding the resource: none for a database, one for a container. */
  parents: readonly string[];
  resource: StoredResource;
  /** The store's counter behind new `_rid`s after the change, so a replay never hands out a taken rid. */
  ridCount: number;
}

/** Sees every change to an account as it happens, and narrows partition-scoped queries. */
export interface AccountObserver {
  /**
   * Called synchronously with each change. A replace reports only the stored resource (same `_rid`); removing a
   * database or container reports its containers' removal first, not their documents'.
   */
  changed(change: ResourceChange): void;
  /**
   * The documents a query sent with this `x-ms-documentdb-partitionkey` header may look at, in storage order, or
   * undefined to look at all of the container's.
   */
  partitionItems(containerRid: string, partitionKeyHeader: string): readonly StoredResource[] | undefined;
  /** A query ran over this many documents. */
  queried(documentCount: number): void;
  /**
   * Test-only: answers a query the package's engine cannot run (Cosmos DB's search functions) over the documents
   * in scope, or undefined to leave it to the package. May throw; the request is then answered with 400.
   */
  answerQuery?(
    query: { query: string; parameters?: unknown },
    documents: readonly StoredResource[],
  ): unknown[] | undefined;
}

const requestPartitionKey = new AsyncLocalStorage<string | undefined>();

/** Runs a request's handler with its partition key header in scope, for the query of a hooked account. */
export function withPartitionKey<T>(partitionKeyHeader: string | undefined, run: () => T): T {
  return requestPartitionKey.run(partitionKeyHeader, run);
}

/**
 * Reports every change of the account to the observer from now on, including those of databases and containers
 * created later, and lets partition-scoped queries look only at the observer's items for that partition.
 */
export function observeAccount(account: CosmosAccount, observer: AccountObserver): void {
  const node = nodeOf(account);
  hookStore(
    node.databases,
    'database',
    () => [],
    observer,
    (database) =>
      hookStore(
        database.collections,
        'container',
        () => [ridOf(database)],
        observer,
        (collection) => hookDocuments(collection, ridOf(database), observer),
      ),
  );
}

/** A change as the journal keeps it: a removal needs only the `_rid`. */
export type ReplayedChange =
  | {
      kind: 'stored';
      level: ResourceLevel;
      parents: readonly string[];
      resource: StoredResource;
      ridCount: number;
    }
  | { kind: 'removed'; level: ResourceLevel; parents: readonly string[]; rid: string };

/**
 * Applies a journalled change to the account, as the request that made it did. Storing over an existing `_rid`
 * replaces it; removing a missing one does nothing. Throws when the parent database or container is missing.
 */
export function replayChange(account: CosmosAccount, change: ReplayedChange): void {
  const store = storeAt(nodeOf(account), change.level, change.parents);
  const existing = (rid: string) => store._data.get(rid)?.read();
  if (change.kind === 'removed') {
    const current = existing(change.rid);
    if (current) store.delete(current.id, store._getPartition(current));
    return;
  }
  const current = existing(change.resource._rid);
  if (current) store.replace(change.resource, current, { keepSystemProperties: true });
  else store._set(change.resource);
  store._ridCount = Math.max(store._ridCount, change.ridCount);
}
/** The store a change at `level` goes to; throws when a parent is missing. */
function storeAt(
  account: AccountNode,
  level: ResourceLevel,
  parents: readonly string[],
): ItemStore<ResourceNode> {
  if (level === 'database') return account.databases;
  const database = account.database(parents[0] ?? '');
  if (!database.read()) throw new Error(`database '${parents[0]}' does not exist`);
  if (level === 'container') return database.collections;
  const collection = database.collection(parents[1] ?? '');
  if (!collection.read()) throw new Error(`container '${parents[1]}' does not exist`);
  return collection.documents;
}

const hooked = new WeakSet<object>();

/**
 * Wraps one store's mutators (on the instance, never the package's classes) so the observer sees each change;
 * `onNode` hooks the child stores of each database or container node as it is created.
 */
function hookStore<TNode extends ResourceNode>(
  store: ItemStore<TNode>,
  level: ResourceLevel,
  parents: () => readonly string[],
  observer: AccountObserver,
  onNode?: (node: TNode) => void,
): void {
  if (hooked.has(store)) return;
  hooked.add(store);
  const set = store._set.bind(store);
  const remove = store.delete.bind(store);
  const replace = store.replace.bind(store);
  let replacing = false;
  const report = (kind: ResourceChange['kind'], resource: StoredResource) =>
    observer.changed({ kind, level, parents: parents(), resource, ridCount: store._ridCount });

  store._set = (data) => {
    const stored = set(data);
    const node = store._data.get(stored._rid);
    if (node && onNode) onNode(node);
    report('stored', stored);
    return stored;
  };
  store.delete = (idOrRid, partition) => {
    const current = store._item('/id', idOrRid, partition).read();
    if (current && !replacing && onNode) reportChildrenRemoved(store._data.get(current._rid), observer);
    remove(idOrRid, partition);
    if (current && !replacing) report('removed', current);
  };
  store.replace = (data, original, options) => {
    replacing = true;
    try {
      // A replayed replace must keep the journalled etag and timestamp, which the package's replace renews.
      if (options?.keepSystemProperties) {
        remove(original.id, store._getPartition(original));
        return store._set(data);
      }
      return replace(data, original);
    } finally {
      replacing = false;
    }
  };
  for (const node of store._data.values()) onNode?.(node);
}

/** Before a database or container goes, its containers are reported gone (their documents go with them). */
function reportChildrenRemoved(node: ResourceNode | undefined, observer: AccountObserver): void {
  const collections = (node as Partial<DatabaseNode> | undefined)?.collections;
  if (!collections || !node) return;
  for (const collection of collections._data.values()) {
    const resource = collection.read();
    if (resource) {
      observer.changed({
        kind: 'removed',
        level: 'container',
        parents: [ridOf(node)],
        resource,
        ridCount: collections._ridCount,
      });
    }
  }
}

function hookDocuments(collection: CollectionNode, databaseRid: string, observer: AccountObserver): void {
  const store = collection.documents;
  const containerRid = ridOf(collection);
  const paths = store._partitionKeyPath ?? [];
  if (paths.length > 1) fileByWholeKey(store, paths);
  hookStore(store, 'document', () => [databaseRid, containerRid], observer);
  const fullScan = store.query.bind(store);
  /** The observer's own answer, a page at a time (the continuation is the offset of the next page). */
  const answer = (params: QueryParams, documents: readonly StoredResource[], options: QueryOptions) => {
    let rows;
    try {
      rows = observer.answerQuery?.(params, documents);
    } catch (error) {
      (error as { badRequest?: boolean }).badRequest = true;
      throw error;
    }
    if (rows === undefined) return undefined;
    observer.queried(documents.length);
    const offset = typeof options.continuation === 'number' ? options.continuation : 0;
    const size = options.maxItemCount && options.maxItemCount > 0 ? options.maxItemCount : rows.length;
    const next = offset + size;
    return { result: rows.slice(offset, next), continuation: next < rows.length ? next : null };
  };
  // The package's query, over the partition's documents only when the request names a partition key.
  store.query = (params, options) => {
    const header = requestPartitionKey.getStore();
    const parent = store._parent.read();
    const scoped = header === undefined || !parent ? undefined : observer.partitionItems(parent._rid, header);
    const answered =
      observer.answerQuery === undefined
        ? undefined
        : answer(params, scoped ?? stored(store).map(([, resource]) => resource), options);
    if (answered) return answered;
    if (!scoped) {
      observer.queried(store._data.size);
      return fullScan(params, options);
    }
    observer.queried(scoped.length);
    const compositeIndexes =
      (parent?.['indexingPolicy'] as { compositeIndexes?: unknown } | undefined)?.compositeIndexes ?? [];
    try {
      return store._getQuery(params.query).exec([...scoped], {
        parameters: params.parameters,
        udf: store._userDefinedFunctions(),
        maxItemCount: options.maxItemCount,
        continuation: options.continuation,
        compositeIndexes,
      });
    } catch (error) {
      (error as { badRequest?: boolean }).badRequest = true;
      throw error;
    }
  };
}

/**
 * The package files a document under the value of its first partition key path only: under a hierarchical key
 * ([/userId, /sessionId]) two sessions of one user could not both hold an item with the same id (`digest`), and a
 * point read of one found the other's. This files the documents of such a container under their whole key, as
 * Cosmos DB does: the key of a stored document from its properties, and the key a request names from its
 * `x-ms-documentdb-partitionkey` header (the package's handlers pass on its first value only). Installed before
 * the container holds documents.
 */
function fileByWholeKey(store: ItemStore<ResourceNode>, paths: readonly string[]): void {
  const segments = paths.map((path) => path.split('/').filter((segment) => segment !== ''));
  // The SDK sends `{}` for a component a document lacks.
  const wholeKey = (values: readonly unknown[]) =>
    JSON.stringify(values.map((value) => (value === undefined ? {} : value)));
  store._getPartition = (data) => wholeKey(segments.map((path) => valueAt(data, path)));
  const item = store._item.bind(store);
  store._item = (keyPath, value, partition) => {
    const header = requestPartitionKey.getStore();
    let named: unknown;
    try {
      named = header === undefined ? undefined : JSON.parse(header);
    } catch {
      named = undefined;
    }
    const requested = Array.isArray(named) && named.length === paths.length ? wholeKey(named) : undefined;
    return item(keyPath, value, requested ?? partition);
  };
}
