// The Redis hot store's copy of the entries it last read or wrote, so a read of an unchanged entry costs a version
// check, not the value: bounded per session, in entries and in bytes, the least recently used going first.

/** An entry as this process last saw it: its version and its JSON as stored. */
export interface HeldEntry {
  version: string;
  json: string;
}

export interface ReadCacheLimits {
  /** Entries kept per session (its working memory, header and latest turn records). */
  entriesPerSession: number;
  /** Entries kept in all. */
  entries: number;
  /** Characters of JSON kept in all (about bytes for the ASCII most of it is). */
  chars: number;
}

export const DEFAULT_READ_CACHE_LIMITS: ReadCacheLimits = {
  entriesPerSession: 16,
  entries: 4_096,
  chars: 64 * 1024 * 1024,
};

export class RedisReadCache {
  /** Sessions, least recently used first; in each, its entries least recently used first. */
  private readonly sessions = new Map<string, Map<string, HeldEntry>>();
  private entryCount = 0;
  private charCount = 0;

  constructor(private readonly limits: ReadCacheLimits = DEFAULT_READ_CACHE_LIMITS) {
    for (const [name, value] of Object.entries(limits))
      if (!Number.isInteger(value) || value < 1)
        throw new RangeError(`The Redis read cache's ${name} must be a whole number of at least 1.`);
  }

  /** The entry held for the session's key, now the most recently used; undefined when none is. */
  get(sessionId: string, key: string): HeldEntry | undefined {
    const entries = this.sessions.get(sessionId);
    const held = entries?.get(key);
    if (entries === undefined || held === undefined) return undefined;
    this.touch(sessionId, entries);
    entries.delete(key);
    entries.set(key, held);
    return held;
  }

  /** Holds the entry as the most recently used, then lets the oldest go until every bound holds. */
  set(sessionId: string, key: string, entry: HeldEntry): void {
    this.delete(sessionId, key);
    // One entry past the whole bound is not kept: it would push out everything else.
    if (entry.json.length > this.limits.chars) return;
    const entries = this.sessions.get(sessionId) ?? new Map<string, HeldEntry>();
    this.touch(sessionId, entries);
    entries.set(key, entry);
    this.entryCount += 1;
    this.charCount += entry.json.length;
    while (entries.size > this.limits.entriesPerSession) this.evictOldest(sessionId, entries);
    while (this.entryCount > this.limits.entries || this.charCount > this.limits.chars) {
      const oldest = this.sessions.entries().next().value;
      if (oldest === undefined) break;
      this.evictOldest(oldest[0], oldest[1]);
    }
  }

  delete(sessionId: string, key: string): void {
    const entries = this.sessions.get(sessionId);
    const held = entries?.get(key);
    if (entries === undefined || held === undefined) return;
    entries.delete(key);
    this.forget(held);
    if (entries.size === 0) this.sessions.delete(sessionId);
  }

  deleteSession(sessionId: string): void {
    for (const held of this.sessions.get(sessionId)?.values() ?? []) this.forget(held);
    this.sessions.delete(sessionId);
  }

  /** What is held: sessions, entries and characters of JSON. */
  size(): { sessions: number; entries: number; chars: number } {
    return { sessions: this.sessions.size, entries: this.entryCount, chars: this.charCount };
  }

  private touch(sessionId: string, entries: Map<string, HeldEntry>): void {
    this.sessions.delete(sessionId);
    this.sessions.set(sessionId, entries);
  }

  private evictOldest(sessionId: string, entries: Map<string, HeldEntry>): void {
    const oldest = entries.entries().next().value;
    if (oldest === undefined) return;
    this.delete(sessionId, oldest[0]);
  }

  private forget(held: HeldEntry): void {
    this.entryCount -= 1;
    this.charCount -= held.json.length;
  }
}
