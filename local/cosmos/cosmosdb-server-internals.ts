// The one place that reaches into @vercel/cosmosdb-server past its public API: the in-memory account and the
// request router. The package's createHttpsServer keeps the account in a closure, so persistence and TTL need
// their own server around these pieces.
import { AsyncLocalStorage } from 'node:async_hooks';
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import { valueAt } from './document-path.js';

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

export type RouteParams = Readonly<Record<string, string | undefined>>;

type RouteHandler = (
  account: CosmosAccount,
  req: IncomingMessage,
  res: ServerResponse,
  params: RouteParams,
) => unknown;

/** Finds the handler for a request, or undefined when no route matches. */
export type Router = (req: IncomingMessage) => [RouteParams, RouteHandler] | undefined;

/** A fresh, empty account; `host` and `port` are what it advertises as its endpoint. */
export function createAccount(host: string, port: number): CosmosAccount {
  const Account = loadDefault<new (host: string, port: number) => AccountNode>(
    '@vercel/cosmosdb-server/lib/account/index.js',
  );
  return new Account(host, port) as unknown as CosmosAccount;
}

export function loadRouter(): Router {
  useLinearStripUndefined();
  useLinearFromClause();
  return loadDefault<Router>('@vercel/cosmosdb-server/lib/routes.js');
}

/**
 * The query engine (@zeit/cosmosdb-query, which the package runs every query with) copies each query result
 * through `stripUndefined`, whose array branch rebuilds the array once per element: quadratic in an array's
 * length, ~6 ms per document holding a 1,536-number embedding, so reading 100 summaries took 0.6 s. This swaps in
 * a linear function with the same result (undefined dropped from arrays and objects, everything else copied). The
 * engine calls it through its helpers module's exports, so replacing the export reaches every caller.
 */
function useLinearStripUndefined(): void {
  const enginePath = resolveEngineModule('helpers');
  const helpers = require(enginePath) as { stripUndefined?: (value: unknown) => unknown };
  if (typeof helpers.stripUndefined !== 'function')
    throw new Error(
      "@zeit/cosmosdb-query's helpers have no stripUndefined: the engine's layout has changed.",
    );
  helpers.stripUndefined = stripUndefined;
}

/**
 * The query engine compiles a FROM clause into `collection.reduce(($, c) => [...$, { c }], [])`, which copies the
 * accumulated array once per document: quadratic in a partition's size (0.3 s for 10,000 documents, per query).
 * This rewrites each such accumulator step in the compiled program into `($.push(...), $)`, the same result in
 * linear time; the accumulator is always the reduce's own fresh `[]`, so pushing onto it changes nothing else. (A
 * JOIN's step pushes a document's array as spread arguments: fine for any array a 2 MB document holds in practice.)
 */
function useLinearFromClause(): void {
  const enginePath = resolveEngineModule('transformer');
  const transformer = require(enginePath) as { default?: (sqlAst: unknown) => unknown };
  const transform = transformer.default;
  if (typeof transform !== 'function')
    throw new Error(
      "@zeit/cosmosdb-query's transformer has no default export: the engine's layout has changed.",
    );
  if ((transform as { linearFrom?: boolean }).linearFrom === true) return;
  const linear = (sqlAst: unknown) => {
    const program = transform(sqlAst);
    rewriteReduceSteps(program);
    return program;
  };
  transformer.default = Object.assign(linear, { linearFrom: true });
}

type JsNode = Record<string, unknown> & { type?: unknown };

/** Rewrites, anywhere in the program, a reducer `($, x) => [...$, a, ...b]` (or `cond ? [...$, a] : $`). */
function rewriteReduceSteps(node: unknown): void {
  if (Array.isArray(node)) {
    for (const child of node) rewriteReduceSteps(child);
    return;
  }
  if (typeof node !== 'object' || node === null) return;
  const js = node as JsNode;
  if (js.type === 'CallExpression' && isReduceCall(js)) {
    const reducer = (js.arguments as JsNode[] | undefined)?.[0];
    if (reducer?.type === 'ArrowFunctionExpression' && isAccumulator((reducer.params as JsNode[])[0])) {
      const body = reducer.body as JsNode;
      if (body.type === 'ConditionalExpression') body.consequent = pushStep(body.consequent as JsNode);
      else reducer.body = pushStep(body);
    }
  }
  for (const value of Object.values(js)) rewriteReduceSteps(value);
}

function isReduceCall(call: JsNode): boolean {
  const callee = call.callee as JsNode | undefined;
  return callee?.type === 'MemberExpression' && (callee.property as JsNode | undefined)?.name === 'reduce';
}

function isAccumulator(node: JsNode | undefined): boolean {
  return node?.type === 'Identifier' && node.name === '$';
}

/** `[...$, a, ...b]` → `($.push(a, ...b), $)`; anything else is left as it is. */
function pushStep(expression: JsNode): JsNode {
  const elements = expression.elements as JsNode[] | undefined;
  const first = elements?.[0];
  if (
    expression.type !== 'ArrayExpression' ||
    first?.type !== 'SpreadElement' ||
    !isAccumulator(first.argument as JsNode)
  )
    return expression;
  const accumulator = () => ({ type: 'Identifier', name: '$' });
  return {
    type: 'SequenceExpression',
    expressions: [
      {
        type: 'CallExpression',
        callee: {
          type: 'MemberExpression',
          object: accumulator(),
          property: { type: 'Identifier', name: 'push' },
          computed: false,
        },
        arguments: elements?.slice(1) ?? [],
      },
      accumulator(),
    ],
  };
}

function stripUndefined(value: unknown): unknown {
  if (Array.isArray(value)) {
    const kept: unknown[] = [];
    for (const item of value as unknown[]) if (item !== undefined) kept.push(stripUndefined(item));
    return kept;
  }
  if (typeof value === 'object' && value !== null) {
    const kept: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) if (item !== undefined) kept[key] = stripUndefined(item);
    return kept;
  }
  return value;
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

// --- the package's shapes, as far as this module uses them ------------------------------------------------

interface ResourceNode {
  read(): StoredResource | undefined;
}

/** The package's `Items` class: resources by `_rid`, plus a unique-key index. */
interface ItemStore<TNode extends ResourceNode> {
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

interface QueryParams {
  query: string;
  parameters?: unknown;
}

interface QueryOptions {
  maxItemCount?: number | null;
  continuation?: unknown;
}

interface CollectionNode extends ResourceNode {
  documents: ItemStore<ResourceNode>;
  /** An empty node (read() undefined) when there is no such document in the partition. */
  document(idOrRid: string, partition: unknown): ResourceNode;
}

interface DatabaseNode extends ResourceNode {
  collections: ItemStore<CollectionNode>;
  /** An empty node (read() undefined) when there is no such container. */
  collection(idOrRid: string): CollectionNode;
}

interface AccountNode {
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

function ridOf(node: ResourceNode): string {
  const resource = node.read();
  if (!resource) throw new Error('A hooked resource has no data.');
  return resource._rid;
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

// --- a transactional batch's documents ---------------------------------------------------------------------

/** One operation of a batch request, as the SDK sends it (`partitionKey` is the JSON of the key). */
export interface BatchOperation {
  operationType?: unknown;
  id?: unknown;
  partitionKey?: unknown;
  ifMatch?: unknown;
  resourceBody?: unknown;
}

/** What one operation answered: its status and the document (or error) it returns. */
export interface OperationResult {
  statusCode: number;
  body?: Record<string, unknown>;
}

/** A container's documents as a batch reads and writes them: the stored ones, or a staged copy over them. */
export interface BatchDocuments {
  readonly [batchBrand]: true;
}
declare const batchBrand: unique symbol;

/** The container's documents, or undefined when it or its database is missing. */
export function batchDocuments(
  account: CosmosAccount,
  databaseIdOrRid: string,
  containerIdOrRid: string,
): BatchDocuments | undefined {
  const collection = nodeOf(account).database(databaseIdOrRid).collection(containerIdOrRid);
  return collection.read() === undefined ? undefined : (collection as unknown as BatchDocuments);
}

/**
 * A staged copy over the container's documents of one partition: operations run on it see each other's changes and
 * leave the stored documents as they are, so a batch can run every operation once without changing anything.
 */
export function stagedDocuments(stored: BatchDocuments): BatchDocuments {
  const real = stored as unknown as CollectionNode;
  const items = real.documents;
  // By id: every operation of a batch is in its one partition.
  const staged = new Map<string, StoredResource | null>();
  const current = (id: string, read: () => StoredResource | undefined) =>
    staged.has(id) ? (staged.get(id) ?? undefined) : read();
  const stage = (resource: StoredResource) => {
    staged.set(resource.id, resource);
    return resource;
  };
  const fail = (message: string, kind: 'conflict' | 'badRequest') =>
    Object.assign(new Error(message), { [kind]: true });
  const documents = {
    create(data: { id: string; [property: string]: unknown }): StoredResource {
      if (
        current(data.id, () =>
          items._item('/id', data.id, items._getPartition(data as StoredResource)).read(),
        )
      )
        throw fail('Resource with specified id already exists.', 'conflict');
      return stage({ ...data, _rid: `staged:${data.id}`, _etag: randomUUID(), _ts: nowSeconds() });
    },
    replace(data: StoredResource, original: StoredResource): StoredResource {
      if (items._getPartition(data) !== items._getPartition(original))
        throw fail('replacing the partition key is not allowed', 'badRequest');
      if (data.id !== original.id) throw fail('replacing id is not allowed', 'badRequest');
      return stage({
        ...data,
        _rid: original._rid,
        _self: original._self,
        _etag: randomUUID(),
        _ts: nowSeconds(),
      });
    },
    upsert(data: StoredResource): StoredResource {
      const old = current(data.id, () => items._item('/id', data.id, items._getPartition(data)).read());
      return old ? documents.replace(data, old) : documents.create(data);
    },
    delete(id: string): void {
      staged.set(id, null);
    },
    // A patch's condition is the one query an operation runs: over the one document it names.
    query(params: QueryParams): unknown {
      const named = Array.isArray(params.parameters)
        ? (params.parameters as { name?: unknown; value?: unknown }[]).find((p) => p.name === '@id')?.value
        : undefined;
      const document = typeof named === 'string' ? stagedRead(named) : undefined;
      return items
        ._getQuery(params.query)
        .exec(document ? [document] : [], { parameters: params.parameters });
    },
  };
  let partitionOfBatch: unknown;
  const stagedRead = (id: string) => current(id, () => real.document(id, partitionOfBatch).read());
  const copy = {
    read: () => real.read(),
    documents,
    document(id: string, partition: unknown) {
      partitionOfBatch = partition;
      return { read: () => stagedRead(id) };
    },
  };
  return copy as unknown as BatchDocuments;
}

/** Runs one operation of a batch as the package's handlers do (Patch included), on stored or staged documents. */
export function runBatchOperation(documents: BatchDocuments, operation: BatchOperation): OperationResult {
  const ops = loadDefaultless<DocumentOperationsModule>(
    '@vercel/cosmosdb-server/lib/handler/_document-operations.js',
  );
  switch (operation.operationType) {
    case 'Create':
      return ops.createOperation(documents, operation);
    case 'Upsert':
      return ops.upsertOperation(documents, operation);
    case 'Read':
      return ops.readOperation(documents, operation);
    case 'Delete':
      return ops.deleteOperation(documents, operation);
    case 'Replace':
      return ops.replaceOperation(documents, operation);
    case 'Patch': {
      const patch = loadDefaultless<PatchOperationsModule>(
        '@vercel/cosmosdb-server/lib/handler/_patch-operations.js',
      );
      const body = operation.resourceBody;
      const wrapped = isPlainRecord(body) && Array.isArray(body.operations);
      if (!Array.isArray(body) && !wrapped)
        return {
          statusCode: 400,
          body: { code: 'BadRequest', message: 'A Patch operation needs its operations.' },
        };
      return patch.patchOperation(documents, {
        id: operation.id,
        partitionKey: operation.partitionKey,
        ifMatch: operation.ifMatch,
        operations: wrapped ? body.operations : body,
        condition: wrapped && typeof body.condition === 'string' ? body.condition : undefined,
      });
    }
    default:
      return {
        statusCode: 400,
        body: {
          code: 'BadRequest',
          message: `Operation type '${String(operation.operationType)}' is not supported in Batch.`,
        },
      };
  }
}

interface DocumentOperationsModule {
  createOperation(documents: BatchDocuments, input: BatchOperation): OperationResult;
  upsertOperation(documents: BatchDocuments, input: BatchOperation): OperationResult;
  readOperation(documents: BatchDocuments, input: BatchOperation): OperationResult;
  deleteOperation(documents: BatchDocuments, input: BatchOperation): OperationResult;
  replaceOperation(documents: BatchDocuments, input: BatchOperation): OperationResult;
}

interface PatchOperationsModule {
  patchOperation(
    documents: BatchDocuments,
    input: {
      id: unknown;
      partitionKey: unknown;
      ifMatch: unknown;
      operations: unknown;
      condition: string | undefined;
    },
  ): OperationResult;
}

function isPlainRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function nowSeconds(): number {
  return Math.floor(Date.now() / 1000);
}

function nodeOf(account: CosmosAccount): AccountNode {
  return account as unknown as AccountNode;
}

function containerOf(node: CollectionNode): AccountContainer | undefined {
  const settings = node.read();
  return settings === undefined ? undefined : { settings, documents: new ItemStoreView(node.documents) };
}

/** The nodes of a store that hold a resource, with it, in insertion order. */
function stored<TNode extends ResourceNode>(items: ItemStore<TNode>): [TNode, StoredResource][] {
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

/** A module of the query engine (@zeit/cosmosdb-query), resolved from the server package that depends on it. */
function resolveEngineModule(name: string): string {
  return require.resolve(`@zeit/cosmosdb-query/lib/${name}.js`, {
    paths: [dirname(require.resolve('@vercel/cosmosdb-server/package.json'))],
  });
}

/** A CommonJS module of the package whose functions are named exports. */
function loadDefaultless<T>(specifier: string): T {
  return require(specifier) as T;
}

function loadDefault<T>(specifier: string): T {
  const loaded = require(specifier) as { default?: T };
  if (loaded.default === undefined) {
    throw new Error(`${specifier} has no default export: @vercel/cosmosdb-server's layout has changed.`);
  }
  return loaded.default;
}
