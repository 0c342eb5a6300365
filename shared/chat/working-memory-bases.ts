// The bases of working memory in the hot store (hot-window-documents.ts): written once, read by id, and kept by
// each process in a cache bounded by bytes, least recently used out first. A base never changes once written, so a
// cached copy is right whichever process wrote it, and a turn reads its base from here without a request.
import { randomUUID } from 'node:crypto';
import type { HotStore } from '../conversation/hot-store.js';
import type { ConversationMessage } from '../conversation/messages.js';
import { DependencyError } from '../errors.js';
import {
  workingMemoryBaseDocumentId,
  workingMemoryBaseDocumentSchema,
  type WorkingMemoryBaseDocument,
} from './contracts/documents.js';
import { fromHotEntry, toHotValue } from './hot-documents.js';
import type { NewBase } from './hot-window-documents.js';

/** What a process keeps of the bases it read or wrote, by default. */
export const BASE_CACHE_BYTES = 32 * 1024 * 1024;

/** Bases by session and id, their messages as stored; the least recently used leaves first past the bound. */
export class WorkingMemoryBaseCache {
  readonly #entries = new Map<string, { messages: readonly ConversationMessage[]; bytes: number }>();
  #bytes = 0;

  constructor(readonly maxBytes = BASE_CACHE_BYTES) {}

  get(sessionId: string, baseId: string): readonly ConversationMessage[] | undefined {
    const key = cacheKey(sessionId, baseId);
    const entry = this.#entries.get(key);
    if (entry === undefined) return undefined;
    // Taken out and put back: the Map's order is the order of use.
    this.#entries.delete(key);
    this.#entries.set(key, entry);
    // A copy: what a caller does with the messages it gets never changes the base.
    return structuredClone(entry.messages);
  }

  set(sessionId: string, baseId: string, messages: readonly ConversationMessage[], bytes: number): void {
    const key = cacheKey(sessionId, baseId);
    if (this.#entries.has(key) || bytes > this.maxBytes) return;
    this.#entries.set(key, { messages: structuredClone(messages), bytes });
    this.#bytes += bytes;
    for (const [oldest, entry] of this.#entries) {
      if (this.#bytes <= this.maxBytes) break;
      this.#entries.delete(oldest);
      this.#bytes -= entry.bytes;
    }
  }

  /** Bases held, for tests. */
  get size(): number {
    return this.#entries.size;
  }
}

const cacheKey = (sessionId: string, baseId: string) => `${sessionId}\n${baseId}`;

/** A new base's id: unique, so an id names one content for good (two writers never write the same one). */
export function newBaseId(): string {
  return workingMemoryBaseDocumentId(randomUUID());
}

/**
 * Writes a new base, kept `ttlSeconds` (longer than the hot store's TTL: it must outlive the documents naming it).
 * The caller names it in working memory next; when that write fails, the base names nothing and expires.
 */
export async function writeBase(
  hot: HotStore,
  cache: WorkingMemoryBaseCache,
  ref: { userId: string; sessionId: string },
  base: NewBase,
  ttlSeconds: number,
): Promise<void> {
  const document: WorkingMemoryBaseDocument = {
    id: base.id,
    sessionId: ref.sessionId,
    userId: ref.userId,
    kind: 'working-memory-base',
    messages: base.messages,
    createdAt: base.createdAt,
  };
  const value = toHotValue(document);
  const written = await hot.write(ref.sessionId, base.id, value, { kind: 'absent' }, { ttlSeconds });
  // Ids are random: another entry under this one is a fault, not a race.
  if (written.kind === 'conflict')
    throw new DependencyError('hot-store', `A working memory base ${base.id} already exists.`);
  cache.set(ref.sessionId, base.id, base.messages, Buffer.byteLength(JSON.stringify(value)));
}

/**
 * A base's messages, from the cache or else one point read; undefined when it is gone (expired, or erased with its
 * conversation) or is not the user's.
 */
export async function readBase(
  hot: HotStore,
  cache: WorkingMemoryBaseCache,
  ref: { userId: string; sessionId: string },
  baseId: string,
): Promise<readonly ConversationMessage[] | undefined> {
  const cached = cache.get(ref.sessionId, baseId);
  if (cached !== undefined) return cached;
  const entry = await hot.read(ref.sessionId, baseId);
  if (entry === undefined) return undefined;
  const base = fromHotEntry(workingMemoryBaseDocumentSchema, ref.sessionId, entry, 'a working memory base');
  if (base.userId !== ref.userId) return undefined;
  cache.set(ref.sessionId, baseId, base.messages, Buffer.byteLength(JSON.stringify(entry.value)));
  return base.messages;
}
