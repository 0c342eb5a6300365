// What every Cosmos DB adapter needs around the SDK: the HTTP status of a failure, point reads (plain or
// conditional) that treat 404 as "absent", single-partition queries checked against their contract, and one
// DependencyError for a failed call, the SDK's own message kept in `cause` for the logs.
import type { Container, PartitionKey, SqlQuerySpec } from '@azure/cosmos';
import { z } from 'zod';
import { mapBounded } from '../../bounded-parallel.js';
import { DependencyError } from '../../errors.js';
import { guardedItem } from './guarded-item.js';

/** The HTTP status the SDK put on a failure (`code`), if any. */
export function cosmosStatus(error: unknown): number | undefined {
  if (typeof error !== 'object' || error === null || !('code' in error)) return undefined;
  return typeof error.code === 'number' ? error.code : undefined;
}

/** `action` completes "Cosmos DB failed ...", e.g. 'reading the session'. */
export function cosmosFailure(action: string, error: unknown): DependencyError {
  return new DependencyError('cosmos', `Cosmos DB failed ${action}.`, { cause: error });
}

export interface StoredItem<T> {
  resource: T;
  etag: string;
}

/**
 * A point read; undefined when there is no such item. The document must match `schema` (its contract): one that
 * does not is reported as a failure, never handed on half-understood. `what` names it in the error.
 */
export async function readItem<T>(
  container: Container,
  id: string,
  partitionKey: PartitionKey,
  what: string,
  schema: z.ZodType<T>,
): Promise<StoredItem<T> | undefined> {
  const read = await readItemIfChanged(container, id, partitionKey, what, schema, undefined);
  if (read === 'unchanged') throw new Error('An unconditional read cannot answer "unchanged".');
  return read;
}

/**
 * As readItem, conditional on a version the caller holds (If-None-Match): 'unchanged' when that version is still
 * the stored one, which Cosmos DB answers with 304 and no body.
 */
export async function readItemIfChanged<T>(
  container: Container,
  id: string,
  partitionKey: PartitionKey,
  what: string,
  schema: z.ZodType<T>,
  etag: string | undefined,
): Promise<StoredItem<T> | undefined | 'unchanged'> {
  const item = guardedItem(container, id, partitionKey);
  let response;
  try {
    response = await item.read(
      etag === undefined ? {} : { accessCondition: { type: 'IfNoneMatch', condition: etag } },
    );
  } catch (error) {
    if (cosmosStatus(error) === 404) return undefined;
    throw cosmosFailure(`reading ${what}`, error);
  }
  if (response.statusCode === 304 && etag !== undefined) return 'unchanged';
  if (response.statusCode === 404 || response.resource === undefined) return undefined;
  return { resource: parseStored(schema, response.resource, what), etag: response.etag };
}

/** A single-partition query; every item must match `schema` (its contract), as for readItem. */
export async function queryItems<T>(
  container: Container,
  query: SqlQuerySpec,
  partitionKey: PartitionKey,
  what: string,
  schema: z.ZodType<T>,
): Promise<T[]> {
  let resources: unknown[];
  try {
    ({ resources } = await container.items.query(query, { partitionKey }).fetchAll());
  } catch (error) {
    throw cosmosFailure(`reading ${what}`, error);
  }
  return parseStored(z.array(schema), resources, what);
}

/** A stored document parsed with its contract; one this version cannot read is a dependency failure. */
export function parseStored<T>(schema: z.ZodType<T>, value: unknown, what: string): T {
  const parsed = schema.safeParse(value);
  if (!parsed.success)
    throw new DependencyError('cosmos', `Cosmos DB holds ${what} this version does not read.`, {
      cause: parsed.error,
    });
  return parsed.data;
}

/**
 * A conditional point read through the process's cache of stored versions: the cached item when the stored one
 * is unchanged (304, no body), else the item read (cached in its turn), or undefined when there is none.
 */
export async function readThroughCache<T>(
  cache: StoredItemCache<T>,
  key: string,
  container: Container,
  id: string,
  partitionKey: PartitionKey,
  what: string,
  schema: z.ZodType<T>,
): Promise<StoredItem<T> | undefined> {
  const cached = cache.get(key);
  const read = await readItemIfChanged(container, id, partitionKey, what, schema, cached?.etag);
  const current = read === 'unchanged' ? cached : read;
  if (current === undefined) cache.delete(key);
  else cache.set(key, current);
  return current;
}

/**
 * A single-partition query read a page at a time, for a scan that may stop early; every item must match `schema`
 * (its contract), as for queryItems.
 */
export async function* queryPages<T>(
  container: Container,
  query: SqlQuerySpec,
  options: { partitionKey: PartitionKey; pageSize: number },
  what: string,
  schema: z.ZodType<T>,
): AsyncGenerator<T[]> {
  const feed = container.items
    .query(query, { partitionKey: options.partitionKey, maxItemCount: options.pageSize })
    .getAsyncIterator();
  const pages = feed[Symbol.asyncIterator]();
  for (;;) {
    let page;
    try {
      page = await pages.next();
    } catch (error) {
      throw cosmosFailure(`reading ${what}`, error);
    }
    if (page.done === true) return;
    yield parseStored(z.array(schema), page.value.resources, what);
  }
}

/** Creates an item; any failure (a 409 included) is the dependency's, named by `what`. */
export async function createItem(container: Container, item: object, what: string): Promise<void> {
  try {
    await container.items.create(item);
  } catch (error) {
    throw cosmosFailure(`storing ${what}`, error);
  }
}

/**
 * The TTL of the items of something that expires at `expiresAt` (none without one): Cosmos DB removes them
 * `graceSeconds` after it, never sooner than a second from `now`.
 */
export function expiryTtl(
  expiresAt: string | null,
  graceSeconds: number,
  now: number,
): { ttl: number } | undefined {
  if (expiresAt === null) return undefined;
  const seconds = Math.ceil((new Date(expiresAt).getTime() - now) / 1000) + graceSeconds;
  return { ttl: Math.max(1, seconds) };
}

/**
 * Deletes an item; false when it was not there (a repeated delete is no failure) or, given the `etag` it was read
 * at (If-Match), when it has changed since (412): the caller reads again before deciding to delete.
 */
export async function deleteItem(
  container: Container,
  id: string,
  partitionKey: PartitionKey,
  what: string,
  etag?: string,
): Promise<boolean> {
  const item = guardedItem(container, id, partitionKey);
  try {
    await item.delete(etag === undefined ? {} : { accessCondition: { type: 'IfMatch', condition: etag } });
    return true;
  } catch (error) {
    const status = cosmosStatus(error);
    if (status === 404 || (status === 412 && etag !== undefined)) return false;
    throw cosmosFailure(`deleting ${what}`, error);
  }
}

/** The ids of every item of a partition: what a partition's delete queries. */
export const PARTITION_IDS_QUERY = 'SELECT VALUE c.id FROM c';

/**
 * Deletes every item of a partition (or, for a hierarchical key, of a prefix of it), a bounded number at a time;
 * returns how many it deleted (an item already gone, by a retried delete or its TTL, is not counted).
 */
export function deletePartitionItems(
  container: Container,
  partitionKey: PartitionKey,
  what: string,
): Promise<number> {
  return deleteQueriedItems(container, { query: PARTITION_IDS_QUERY }, partitionKey, what);
}

/** Deletes the items of one partition whose ids `idQuery` selects (`SELECT VALUE c.id ...`), as above. */
export async function deleteQueriedItems(
  container: Container,
  idQuery: SqlQuerySpec,
  partitionKey: PartitionKey,
  what: string,
): Promise<number> {
  const ids = await queryItems(container, idQuery, partitionKey, what, z.string());
  const deleted = await mapBounded(ids, PARALLEL_DELETES, (id) =>
    deleteItem(container, id, partitionKey, `an item of ${what}`),
  );
  return deleted.filter(Boolean).length;
}

/** Deletes in flight at once: quick for a long conversation without a burst that throttles the account. */
const PARALLEL_DELETES = 20;

/**
 * The stored versions of items this process last read or wrote, by key, so the next read can be conditional
 * (If-None-Match: an unchanged item answers 304 with no body). Bounded; least recently used first out.
 */
export class StoredItemCache<T> {
  readonly #entries = new Map<string, StoredItem<T>>();
  constructor(private readonly capacity: number) {}
  get(key: string): StoredItem<T> | undefined {
    return this.#entries.get(key);
  }
  set(key: string, item: StoredItem<T>): void {
    this.#entries.delete(key);
    this.#entries.set(key, item);
    if (this.#entries.size > this.capacity) {
      const oldest = this.#entries.keys().next().value;
      if (oldest !== undefined) this.#entries.delete(oldest);
    }
  }
  delete(key: string): void {
    this.#entries.delete(key);
  }
}
