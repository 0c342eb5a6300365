// The port of the hot store: a session's small, short-lived entries (its working memory, its running turns'
// records and stop requests), each read with a version and written on a condition, expiring a day after the
// last write (HOT_STORE_TTL_SECONDS). Adapters: Cosmos DB and Redis, chosen by HOT_STORE in the composition root.
import { isDeepStrictEqual } from 'node:util';
import { ValidationError } from '../errors.js';

/**
 * An entry's value: a JSON object. Its top-level names `id`, `sessionId`, `ttl` and those starting with `_` are
 * the store's own (Cosmos DB keeps the key, the partition and its system fields beside the value there).
 */
export type HotValue = Record<string, unknown>;

/** An entry as read: its key, its value and the opaque version a conditional write names. */
export interface HotEntry {
  key: string;
  value: HotValue;
  version: string;
}

/** What a write is conditioned on. */
export type HotWriteCondition =
  /** Only when the key holds no entry (never written, expired, evicted or deleted). */
  | { kind: 'absent' }
  /**
   * Only when the entry is still at `version`. `previous`, the value read at that version, lets an adapter send
   * the difference instead of the whole value; an adapter may ignore it.
   */
  | { kind: 'version'; version: string; previous?: HotValue }
  /** Whatever the key holds. */
  | { kind: 'any' };

/** How long an entry is kept, when it must outlive the store's TTL. */
export interface HotWriteOptions {
  /**
   * Seconds the entry is kept at least after this write, when longer than the store's TTL. An adapter that expires a
   * session's entries together, at the TTL after any of them was written, may ignore it for an entry that is never
   * written again: the entries written after it (which outlive it otherwise) keep it.
   */
  ttlSeconds?: number;
}

/** The new version, or `conflict` when the condition did not hold (another writer got there first). */
export type HotWriteResult = { kind: 'written'; version: string } | { kind: 'conflict' };

/**
 * Keys are 1 to 255 letters, digits, `.`, `_`, `:` or `-`, starting with a letter or a digit: safe as a Cosmos DB
 * item id and as a Redis hash field. An entry lives at least the TTL after its own last write; an adapter that
 * keeps a session's entries together may keep it as long as any entry of the session is written.
 */
export interface HotStore {
  /** The session's entry under `key`; undefined when there is none. */
  read(sessionId: string, key: string): Promise<HotEntry | undefined>;
  /** Every entry of the session whose key starts with `prefix` (`''`: all of them), in key order. */
  list(sessionId: string, prefix: string): Promise<HotEntry[]>;
  /**
   * Writes the entry when the condition holds, and restarts its expiry. A value larger than the adapter's bound,
   * a key outside the format or a value using a reserved name is refused with a ValidationError before anything
   * is sent (checkHotWrite).
   */
  write(
    sessionId: string,
    key: string,
    value: HotValue,
    condition: HotWriteCondition,
    options?: HotWriteOptions,
  ): Promise<HotWriteResult>;
  /**
   * Removes every entry of the session (its conversation was deleted) and says how many there were; nothing to
   * remove is not an error.
   */
  deleteSession(sessionId: string): Promise<number>;
}

/** The largest value, in bytes of its JSON, an adapter accepts for one entry. */
export const HOT_VALUE_MAX_BYTES = 1024 * 1024;

const KEY_FORMAT = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,254}$/;
const PREFIX_FORMAT = /^[A-Za-z0-9._:-]{0,255}$/;

/** Whether a top-level name of a value is the store's own. */
export function isReservedHotName(name: string): boolean {
  return name === 'id' || name === 'sessionId' || name === 'ttl' || name.startsWith('_');
}

/** Refuses a key outside the format (a programming error: keys are built from checked ids). */
export function checkHotKey(key: string): void {
  if (!KEY_FORMAT.test(key))
    throw new ValidationError("A hot store key must be 1 to 255 letters, digits, '.', '_', ':' or '-'.");
}

/** Refuses a list prefix that no key could start with. */
export function checkHotPrefix(prefix: string): void {
  if (!PREFIX_FORMAT.test(prefix))
    throw new ValidationError("A hot store prefix must be up to 255 letters, digits, '.', '_', ':' or '-'.");
}

/**
 * What every adapter checks before it sends a write: the key's format, no reserved name in the value, and its JSON
 * within `maxBytes`. Returns the value's JSON, which an adapter may send as it is.
 */
export function checkHotWrite(key: string, value: HotValue, maxBytes = HOT_VALUE_MAX_BYTES): string {
  checkHotKey(key);
  const reserved = Object.keys(value).filter(isReservedHotName);
  if (reserved.length > 0)
    throw new ValidationError(
      `A hot store value cannot hold the store's own fields (${reserved.join(', ')}).`,
    );
  const json = JSON.stringify(value);
  const bytes = Buffer.byteLength(json);
  if (bytes > maxBytes)
    throw new ValidationError(
      `A hot store value takes ${bytes} bytes; an entry holds at most ${maxBytes} bytes.`,
    );
  return json;
}

/**
 * How many items `next` dropped from the head of `before` when it keeps all the rest as its own head (a window of
 * messages sliding on: what is left of it may be nothing), the fewest such; undefined when it does not.
 */
export function slidFrom(before: readonly unknown[], next: readonly unknown[]): number | undefined {
  for (let dropped = 0; dropped <= before.length; dropped++) {
    const kept = before.length - dropped;
    if (kept > next.length) continue;
    if (before.slice(dropped).every((item, i) => isDeepStrictEqual(item, next[i]))) return dropped;
  }
  return undefined;
}
