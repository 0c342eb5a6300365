// Typed access to the parts of @vercel/cosmosdb-server that its public API hides: the in-memory account and
// the request router. The package's createHttpsServer keeps the account in a closure, so persistence and TTL
// need their own server around these pieces. Pinned to the package's 1.x internals (lib/account, lib/routes).
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createRequire } from 'node:module';

/** A stored resource (database, container or document) with its system properties. */
export interface StoredResource {
  id: string;
  _rid: string;
  _etag?: string;
  _ts?: number;
  _self?: string;
  [property: string]: unknown;
}

/** One node of the package's resource tree; `read()` is undefined for a resource that does not exist. */
export interface ResourceNode<T extends StoredResource = StoredResource> {
  read(): T | undefined;
}

/** The package's `Items` collection class: resources by `_rid`, plus a unique-key index. */
export interface ItemStore<TNode extends ResourceNode> {
  _data: Map<string, TNode>;
  /** Counter behind new `_rid`s: must survive a restart so new rids never collide with stored ones. */
  _ridCount: number;
  /** Adds a new resource, giving it fresh system properties (what a create request does). */
  create(data: { id: string; [property: string]: unknown }): StoredResource;
  /** Inserts a resource as is (system properties included) and indexes it. */
  _set(data: StoredResource): StoredResource;
  _getPartition(data: StoredResource): unknown;
  delete(idOrRid: string, partition: unknown): void;
}

export type DocumentNode = ResourceNode;

export interface CollectionNode extends ResourceNode {
  documents: ItemStore<DocumentNode>;
}

export interface DatabaseNode extends ResourceNode {
  collections: ItemStore<CollectionNode>;
  collection(idOrRid: string): CollectionNode;
}

export interface CosmosAccount {
  databases: ItemStore<DatabaseNode>;
  database(idOrRid: string): DatabaseNode;
}

export type RouteParams = Readonly<Record<string, string | undefined>>;

export type RouteHandler = (
  account: CosmosAccount,
  req: IncomingMessage,
  res: ServerResponse,
  params: RouteParams,
) => unknown;

/** Finds the handler for a request, or undefined when no route matches. */
export type Router = (req: IncomingMessage) => [RouteParams, RouteHandler] | undefined;

type AccountConstructor = new (host: string, port: number) => CosmosAccount;

// createRequire, not `import`: these are CommonJS files with an `exports.default`, and loaders differ in how
// they map that onto an ES default import.
const require = createRequire(import.meta.url);

function loadDefault<T>(specifier: string): T {
  const loaded = require(specifier) as { default?: T };
  if (loaded.default === undefined) {
    throw new Error(`${specifier} has no default export: @vercel/cosmosdb-server's layout has changed.`);
  }
  return loaded.default;
}

/** A fresh, empty account; `host` and `port` are what it advertises as its endpoint. */
export function createAccount(host: string, port: number): CosmosAccount {
  const Account = loadDefault<AccountConstructor>('@vercel/cosmosdb-server/lib/account/index.js');
  return new Account(host, port);
}

export function loadRouter(): Router {
  return loadDefault<Router>('@vercel/cosmosdb-server/lib/routes.js');
}

/** The resources held by a store, in insertion order, skipping deleted ones. */
export function storedResources<TNode extends ResourceNode>(
  store: ItemStore<TNode>,
): [TNode, StoredResource][] {
  const result: [TNode, StoredResource][] = [];
  for (const node of store._data.values()) {
    const resource = node.read();
    if (resource) result.push([node, resource]);
  }
  return result;
}
