// The in-memory twin of the hot store port: the same conditions, key order, value bound and expiry as the adapters,
// judged by an injectable clock so a test moves time instead of sleeping. Values are kept as JSON, so a caller
// never shares an object with the store.
import {
  checkHotKey,
  checkHotPrefix,
  checkHotWrite,
  HOT_VALUE_MAX_BYTES,
  type HotEntry,
  type HotStore,
  type HotValue,
  type HotWriteCondition,
  type HotWriteOptions,
  type HotWriteResult,
} from '../../shared/conversation/hot-store.js';
import { HOT_STORE_TTL_SECONDS } from '../../shared/chat/contracts/documents.js';

interface Stored {
  json: string;
  version: string;
  expiresAtMs: number;
}

export class MemoryHotStore implements HotStore {
  readonly #entries = new Map<string, Map<string, Stored>>();
  readonly #now: () => number;
  readonly #ttlMs: number;
  readonly #maxBytes: number;
  #nextVersion = 0;
  /** Every write asked for (refused ones included), for tests that count them. */
  readonly writes: { sessionId: string; key: string; condition: HotWriteCondition['kind'] }[] = [];

  constructor(options: { now?: () => number; ttlSeconds?: number; maxValueBytes?: number } = {}) {
    this.#now = options.now ?? Date.now;
    this.#ttlMs = (options.ttlSeconds ?? HOT_STORE_TTL_SECONDS) * 1000;
    this.#maxBytes = options.maxValueBytes ?? HOT_VALUE_MAX_BYTES;
  }

  read(sessionId: string, key: string): Promise<HotEntry | undefined> {
    return later(() => {
      checkHotKey(key);
      const stored = this.#live(sessionId, key);
      return stored && toEntry(key, stored);
    });
  }

  list(sessionId: string, prefix: string): Promise<HotEntry[]> {
    return later(() => {
      checkHotPrefix(prefix);
      const keys = [...(this.#entries.get(sessionId)?.keys() ?? [])].filter((key) => key.startsWith(prefix));
      return keys.sort(byCodeUnit).flatMap((key) => {
        const stored = this.#live(sessionId, key);
        return stored ? [toEntry(key, stored)] : [];
      });
    });
  }

  write(
    sessionId: string,
    key: string,
    value: HotValue,
    condition: HotWriteCondition,
    options: HotWriteOptions = {},
  ): Promise<HotWriteResult> {
    this.writes.push({ sessionId, key, condition: condition.kind });
    // Taken now: a caller that changes its object after the call changes nothing stored.
    let json: string | Error;
    try {
      json = checkHotWrite(key, value, this.#maxBytes);
    } catch (error) {
      json = error instanceof Error ? error : new Error(String(error));
    }
    const checked = json;
    return later(() => {
      if (checked instanceof Error) throw checked;
      return this.#write(sessionId, key, checked, condition, options.ttlSeconds);
    });
  }

  #write(
    sessionId: string,
    key: string,
    json: string,
    condition: HotWriteCondition,
    ttlSeconds: number | undefined,
  ): HotWriteResult {
    const current = this.#live(sessionId, key);
    const holds =
      condition.kind === 'any' ||
      (condition.kind === 'absent' && current === undefined) ||
      (condition.kind === 'version' && current?.version === condition.version);
    if (!holds) return { kind: 'conflict' };
    this.#nextVersion += 1;
    const version = `v${this.#nextVersion}`;
    let session = this.#entries.get(sessionId);
    if (session === undefined) {
      session = new Map<string, Stored>();
      this.#entries.set(sessionId, session);
    }
    const ttlMs = ttlSeconds === undefined ? this.#ttlMs : Math.max(this.#ttlMs, ttlSeconds * 1000);
    session.set(key, { json, version, expiresAtMs: this.#now() + ttlMs });
    return { kind: 'written', version };
  }

  deleteSession(sessionId: string): Promise<number> {
    return later(() => {
      const keys = [...(this.#entries.get(sessionId)?.keys() ?? [])];
      const removed = keys.filter((key) => this.#live(sessionId, key)).length;
      this.#entries.delete(sessionId);
      return removed;
    });
  }

  /** The sessions holding at least one live entry, for tests that look at what is left. */
  sessions(): string[] {
    return [...this.#entries.keys()].filter((sessionId) =>
      [...(this.#entries.get(sessionId)?.keys() ?? [])].some((key) => this.#live(sessionId, key)),
    );
  }

  /** The entry when it has not expired; an expired one is forgotten here. */
  #live(sessionId: string, key: string): Stored | undefined {
    const session = this.#entries.get(sessionId);
    const stored = session?.get(key);
    if (stored === undefined || stored.expiresAtMs > this.#now()) return stored;
    session?.delete(key);
    return undefined;
  }
}

/** Answers on a later tick, as a store across a network does; a refusal is a rejection, never a throw. */
function later<T>(answer: () => T): Promise<T> {
  return Promise.resolve().then(answer);
}

function toEntry(key: string, stored: Stored): HotEntry {
  return { key, value: JSON.parse(stored.json) as HotValue, version: stored.version };
}

/** Key order is code-unit order, as a Cosmos DB `ORDER BY` on a string and a sort of Redis field names give. */
function byCodeUnit(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
