// Where the local Cosmos DB reaches into @vercel/cosmosdb-server past its public API: the in-memory account and its
// stores here; the router, change observation and batches in cosmosdb-server-*.ts beside it. The package keeps the
// account in a closure of createHttpsServer, so persistence and TTL need their own server around these pieces.
import { createRequire } from 'node:module';

/** A stored resource (database, container or document) with its system properties. */
export interface StoredResource {
  id: string;
  _rid: string;
  _etag?: string | undefined;
  _ts?: number | undefined;
  _self?: string | undefined;
  [property: string]: unknown;
}

/** The package's in-memory account; only this module looks inside it. */
export interface CosmosAccount {
  readonly [accountBrand]: true;
}
declare const accountBrand: unique symbol;

/**
 * One level of the account's resource tree: its databases, a database's containers or a container's
 * documents. A view: the resources live in the account.
 */
export interface ResourceStore {
  /** The stored resources, in insertion order. */
  list(): StoredResource[];
  readonly size: number;
  /** Adds a new resource with fresh system properties, as a create request does. */
  create(data: { id: string; [property: string]: unknown }): StoredResource;
  /** Inserts a resource as it is, system properties included, and indexes it so requests find it. */
  insert(resource: StoredResource): void;
  /** Deletes a stored resource (found by its id within its partition). */
  remove(resource: StoredResource): void;
  /** The counter behind new `_rid`s: it must survive a restart so new rids never collide with stored ones. */
  readonly ridCount: number;
  /** Raises the counter to `count` if it is lower. */
  raiseRidCount(count: number): void;
}

/** A container: its own resource (settings such as `defaultTtl`, and `_rid`) and its documents. */
export interface AccountContainer {
  readonly settings: StoredResource;
  readonly documents: ResourceStore;
}
/** A fresh, empty account; `host` and `port` are what it advertises as its endpoint. */
export function createAccount(host: string, port: number): CosmosAccount {
  const Account = loadDefault<new (host: string, port: number) => AccountNode>(
    '@vercel/cosmosdb-server/lib/account/index.js',
  );
  return new Account(host, port) as unknown as CosmosAccount;
}
export function databases(account: CosmosAccount): ResourceStore {
  return new ItemStoreView(nodeOf(account).databases);
}

/** The containers of a database, which must exist. */
export function containers(account: CosmosAccount, databaseId: string): ResourceStore {
  const database = nodeOf(account).database(databaseId);
  if (database.read() === undefined) throw new Error(`Database '${databaseId}' does not exist.`);
  return new ItemStoreView(database.collections);
}

/** A container by id or `_rid` (as request paths name them), or undefined when it or its database is missing. */
export function findContainer(
  account: CosmosAccount,
  databaseIdOrRid: string,
  containerIdOrRid: string,
): AccountContainer | undefined {
  return containerOf(nodeOf(account).database(databaseIdOrRid).collection(containerIdOrRid));
}

/** Every container of every database. */
export function allContainers(account: CosmosAccount): AccountContainer[] {
  return stored(nodeOf(account).databases).flatMap(([database]) =>
    stored(database.collections).flatMap(([container]) => containerOf(container) ?? []),
  );
}
// --- the package's shapes, as far as these modules use them -----------------------------------------------

export interface ResourceNode {
  read(): StoredResource | undefined;
}

/** The package's `Items` class: resources by `_rid`, plus a unique-key index. */
export interface ItemStore<TNode extends ResourceNode> {
  _data: Map<string, TNode>;
  /** The container's partition key paths (`/userId`, ...); the package files documents by the first only. */
  _partitionKeyPath?: readonly string[];
  _ridCount: number;
  _parent: ResourceNode;
  create(data: { id: string; [property: string]: unknown }): StoredResource;
  _set(data: StoredResource): StoredResource;
  _getPartition(data: StoredResource): unknown;
  _item(keyPath: string, keyPathValue: string, partition: unknown): TNode;
  delete(idOrRid: string, partition: unknown): void;
  /** `options` is ours: the package ignores it, our hooked replace keeps the journalled system properties. */
  replace(
    data: StoredResource,
    original: StoredResource,
    options?: { keepSystemProperties: boolean },
  ): StoredResource;
  query(params: QueryParams, options: QueryOptions): unknown;
  read(options?: QueryOptions): unknown;
  _getQuery(sql: string): { exec(data: StoredResource[], options: Record<string, unknown>): unknown };
  _userDefinedFunctions(): unknown;
}

export interface QueryParams {
  query: string;
  parameters?: unknown;
}

export interface QueryOptions {
  maxItemCount?: number | null;
  continuation?: unknown;
}

export interface CollectionNode extends ResourceNode {
  documents: ItemStore<ResourceNode>;
  /** An empty node (read() undefined) when there is no such document in the partition. */
  document(idOrRid: string, partition: unknown): ResourceNode;
}

export interface DatabaseNode extends ResourceNode {
  collections: ItemStore<CollectionNode>;
  /** An empty node (read() undefined) when there is no such container. */
  collection(idOrRid: string): CollectionNode;
}

export interface AccountNode {
  databases: ItemStore<DatabaseNode>;
  /** An empty node (read() undefined) when there is no such database. */
  database(idOrRid: string): DatabaseNode;
}

class ItemStoreView implements ResourceStore {
  constructor(private readonly items: ItemStore<ResourceNode>) {}

  list(): StoredResource[] {
    return stored(this.items).map(([, resource]) => resource);
  }

  get size(): number {
    return this.items._data.size;
  }

  create(data: { id: string; [property: string]: unknown }): StoredResource {
    return this.items.create(data);
  }

  insert(resource: StoredResource): void {
    this.items._set(resource);
  }

  remove(resource: StoredResource): void {
    this.items.delete(resource.id, this.items._getPartition(resource));
  }

  get ridCount(): number {
    return this.items._ridCount;
  }

  raiseRidCount(count: number): void {
    this.items._ridCount = Math.max(this.items._ridCount, count);
  }
}

export function ridOf(node: ResourceNode): string {
  const resource = node.read();
  if (!resource) throw new Error('A hooked resource has no data.');
  return resource._rid;
}
export function nodeOf(account: CosmosAccount): AccountNode {
  return account as unknown as AccountNode;
}

function containerOf(node: CollectionNode): AccountContainer | undefined {
  const settings = node.read();
  return settings === undefined ? undefined : { settings, documents: new ItemStoreView(node.documents) };
}

/** The nodes of a store that hold a resource, with it, in insertion order. */
export function stored<TNode extends ResourceNode>(items: ItemStore<TNode>): [TNode, StoredResource][] {
  const result: [TNode, StoredResource][] = [];
  for (const node of items._data.values()) {
    const resource = node.read();
    if (resource) result.push([node, resource]);
  }
  return result;
}

// createRequire, not `import`: these are CommonJS files with an `exports.default`, and loaders differ in how
// they map that onto an ES default import.
const require = createRequire(import.meta.url);

export function loadDefaultless<T>(specifier: string): T {
  return require(specifier) as T;
}

export function loadDefault<T>(specifier: string): T {
  const loaded = require(specifier) as { default?: T };
  if (loaded.default === undefined) {
    throw new Error(`${specifier} has no default export: @vercel/cosmosdb-server's layout has changed.`);
  }
  return loaded.default;
}
