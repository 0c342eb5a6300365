// The port of the hot store: a session's small, short-lived entries (its working memory, its running turns'
// records and stop requests), each read with a version and written on a condition, expiring a day after the
// last write (HOT_STORE_TTL_SECONDS). Adapters: Cosmos DB and Redis, chosen by HOT_STORE in the composition root.

/** An entry's value: a JSON object. */
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

/** The new version, or `conflict` when the condition did not hold (another writer got there first). */
export type HotWriteResult = { kind: 'written'; version: string } | { kind: 'conflict' };

export interface HotStore {
  /** The session's entry under `key`; undefined when there is none. */
  read(sessionId: string, key: string): Promise<HotEntry | undefined>;
  /** Every entry of the session whose key starts with `prefix`, in key order. */
  list(sessionId: string, prefix: string): Promise<HotEntry[]>;
  /**
   * Writes the entry when the condition holds, and restarts its expiry. A value larger than the adapter's bound
   * is refused with a ValidationError before anything is sent.
   */
  write(
    sessionId: string,
    key: string,
    value: HotValue,
    condition: HotWriteCondition,
  ): Promise<HotWriteResult>;
  /** Removes every entry of the session (its conversation was deleted); nothing to remove is not an error. */
  deleteSession(sessionId: string): Promise<void>;
}

/** The largest value, in bytes of its JSON, an adapter accepts for one entry. */
export const HOT_VALUE_MAX_BYTES = 1024 * 1024;
