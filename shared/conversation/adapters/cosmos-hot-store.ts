// The Cosmos DB adapter of the hot store: one item per entry, `{ id: key, sessionId, ...value }`, in the session's
// partition of `hot-conversations` (its TTL restarted by each write); version = etag, conditions as If-Match or a
// create, a version write sent as a short JSON patch of the difference when one says it.
import type { Container, PatchOperation } from '@azure/cosmos';
import { isDeepStrictEqual } from 'node:util';
import { z } from 'zod';
import {
  cosmosFailure,
  cosmosStatus,
  deletePartitionItems,
  queryItems,
  readThroughCache,
  StoredItemCache,
  type StoredItem,
} from '../../cosmos/adapters/cosmos-items.js';
import { RETURN_MINIMAL } from '../../cosmos/adapters/cosmos-patch.js';
import { guardedItem } from '../../cosmos/adapters/guarded-item.js';
import {
  checkHotKey,
  checkHotPrefix,
  checkHotWrite,
  HOT_VALUE_MAX_BYTES,
  isReservedHotName,
  slidFrom,
  type HotEntry,
  type HotStore,
  type HotValue,
  type HotWriteCondition,
  type HotWriteOptions,
  type HotWriteResult,
} from '../hot-store.js';

type HotItem = Record<string, unknown>;

const hotItemSchema = z.record(z.string(), z.unknown());

export const LIST_QUERY = 'SELECT * FROM c WHERE c.sessionId = @s AND STARTSWITH(c.id, @p)';

/** Cosmos DB applies at most this many operations in one patch. */
const MAX_PATCH_OPERATIONS = 10;

export function createCosmosHotStore(
  container: Container,
  options: { cachedEntries?: number; maxValueBytes?: number } = {},
): HotStore {
  // The versions this process last read or wrote, so a read of an unchanged entry is answered 304 with no body.
  const cache = new StoredItemCache<HotItem>(options.cachedEntries ?? 2_000);
  const maxBytes = options.maxValueBytes ?? HOT_VALUE_MAX_BYTES;
  const cacheKey = (sessionId: string, key: string) => `${sessionId}\n${key}`;

  async function write(
    sessionId: string,
    key: string,
    value: HotValue,
    condition: HotWriteCondition,
    writeOptions: HotWriteOptions = {},
  ): Promise<HotWriteResult> {
    // The value as stored (JSON leaves out undefined fields), held by no caller: what is sent, cached and diffed.
    const written = JSON.parse(checkHotWrite(key, value, maxBytes)) as HotValue;
    // An item's own `ttl` outlasts the container's default; the diff below never touches it (a reserved name).
    const ttl = writeOptions.ttlSeconds === undefined ? {} : { ttl: writeOptions.ttlSeconds };
    const item: HotItem = { ...written, id: key, sessionId, ...ttl };
    // The guard checks the id and the partition key of every write, a create's and an upsert's too.
    const stored = guardedItem(container, key, sessionId);
    try {
      let etag: string;
      // A change answers with headers only; a create or an upsert gets the usual answer, which the SDK reads the id from.
      if (condition.kind === 'absent') ({ etag } = await container.items.create(item));
      else if (condition.kind === 'any') ({ etag } = await container.items.upsert(item));
      else {
        const ifMatch = {
          ...RETURN_MINIMAL,
          accessCondition: { type: 'IfMatch', condition: condition.version },
        } as const;
        // The difference from the stored value when this process holds that version (what a caller passes as
        // previous may be older than the version it names), else from the caller's.
        const known = cache.get(cacheKey(sessionId, key));
        const base =
          condition.previous === undefined
            ? undefined
            : known?.etag === condition.version
              ? known.resource
              : (JSON.parse(JSON.stringify(condition.previous)) as HotValue);
        const operations = base === undefined ? undefined : patchOperations(base, written);
        ({ etag } =
          operations === undefined
            ? await stored.replace(item, ifMatch)
            : await stored.patch(operations, ifMatch));
      }
      cache.set(cacheKey(sessionId, key), { resource: item, etag });
      return { kind: 'written', version: etag };
    } catch (error) {
      const status = cosmosStatus(error);
      // 409: created first by another writer; 412: changed since the version; 404: gone (expired or deleted).
      if (status === 409 || status === 412 || status === 404) {
        cache.delete(cacheKey(sessionId, key));
        return { kind: 'conflict' };
      }
      throw cosmosFailure('writing a hot store entry', error);
    }
  }

  return {
    async read(sessionId, key) {
      checkHotKey(key);
      const stored = await readThroughCache(
        cache,
        cacheKey(sessionId, key),
        container,
        key,
        sessionId,
        'a hot store entry',
        hotItemSchema,
      );
      return stored === undefined ? undefined : toEntry(key, stored);
    },

    async list(sessionId, prefix) {
      checkHotPrefix(prefix);
      const items = await queryItems(
        container,
        {
          query: LIST_QUERY,
          parameters: [
            { name: '@s', value: sessionId },
            { name: '@p', value: prefix },
          ],
        },
        sessionId,
        'the hot store entries of a session',
        hotItemSchema,
      );
      return items
        .flatMap((item) => {
          const { id, _etag } = item;
          return typeof id === 'string' && typeof _etag === 'string'
            ? [toEntry(id, { resource: item, etag: _etag })]
            : [];
        })
        .sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
    },

    write,

    async deleteSession(sessionId) {
      return deletePartitionItems(container, sessionId, 'the hot store entries of a session');
    },
  };
}

/** A copy: the cached item stays what is stored whatever the caller does with the value it gets. */
function toEntry(key: string, stored: StoredItem<HotItem>): HotEntry {
  const value = Object.fromEntries(
    Object.entries(stored.resource).filter(([name]) => !isReservedHotName(name)),
  );
  return { key, value: structuredClone(value), version: stored.etag };
}

/**
 * The patch that turns `previous` into `next`, or undefined when it would take more operations than Cosmos DB
 * allows in one (or none: a write must still restart the TTL): a replace says it then. A list that lost items at
 * its head and gained some at its tail (a window of messages sliding on) becomes removes and appends, so a turn
 * sends the bytes of its own messages only.
 */
export function patchOperations(previous: HotValue, next: HotValue): PatchOperation[] | undefined {
  const operations: PatchOperation[] = [];
  // Own names only: `in` would find `constructor` or `toString` on any object.
  for (const name of Object.keys(previous))
    if (!isReservedHotName(name) && !Object.hasOwn(next, name))
      operations.push({ op: 'remove', path: pointer(name) });
  for (const [name, value] of Object.entries(next)) {
    const path = pointer(name);
    const before = previous[name];
    if (!Object.hasOwn(previous, name)) operations.push({ op: 'set', path, value });
    else if (isDeepStrictEqual(before, value)) continue;
    else if (Array.isArray(before) && Array.isArray(value))
      operations.push(...slideList(path, before, value));
    else operations.push({ op: 'set', path, value });
    if (operations.length > MAX_PATCH_OPERATIONS) return undefined;
  }
  return operations.length === 0 || operations.length > MAX_PATCH_OPERATIONS ? undefined : operations;
}

/** Removes from the head and appends at the tail when `next` keeps a suffix of `before`; else sets the whole list. */
function slideList(path: string, before: readonly unknown[], next: readonly unknown[]): PatchOperation[] {
  const dropped = slidFrom(before, next);
  if (dropped === undefined) return [{ op: 'set', path, value: next }];
  return [
    ...Array.from({ length: dropped }, (): PatchOperation => ({ op: 'remove', path: `${path}/0` })),
    ...next
      .slice(before.length - dropped)
      .map((value): PatchOperation => ({ op: 'add', path: `${path}/-`, value })),
  ];
}

/** A JSON pointer to a top-level name (`~` and `/` escaped). */
function pointer(name: string): string {
  return `/${name.replaceAll('~', '~0').replaceAll('/', '~1')}`;
}
