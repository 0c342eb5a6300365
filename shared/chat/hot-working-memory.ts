// Working memory over the hot store: per session, a document of the active path's newest messages within a byte
// budget (the older of them in an immutable base it names, hot-window-documents.ts), rebuilt from long-term history on
// a miss; appends and path moves are conditional writes over the version read, retried after another writer's.
import type { HotStore, HotValue, HotWriteCondition } from '../conversation/hot-store.js';
import { ConflictError, ForbiddenError } from '../errors.js';
import { movePath, placeTurn } from '../conversation/active-path.js';
import { fitHotWindow } from '../conversation/hot-window.js';
import type { ConversationMessage } from '../conversation/messages.js';
import {
  HOT_STORE_TTL_SECONDS,
  hotConversationDocumentSchema,
  turnCancellationDocumentId,
  turnCancellationDocumentSchema,
  type HotConversationDocument,
} from './contracts/documents.js';
import { fromHotEntry, toHotValue } from './hot-documents.js';
import {
  placeWindow,
  toHotDocument,
  toWorkingMemory,
  type CompactionPolicy,
} from './hot-window-documents.js';
import { newBaseId, readBase, WorkingMemoryBaseCache, writeBase } from './working-memory-bases.js';
import {
  findCommittedTurn,
  readPathWindow,
  rebuildWorkingMemory,
  type LongTermHistory,
} from './working-memory-rebuild.js';
import {
  PathMovedError,
  type WorkingMemory,
  type WorkingMemoryStore,
} from '../conversation/working-memory-store.js';

/** Reloads and retries after a concurrent write took the entry first. */
const MAX_RETRIES = 5;

/**
 * The most bytes of messages the tail keeps before they all go to a new base: a Cosmos DB write is charged by the
 * size of the whole item, nearly flat up to 8 KB and then growing, and a new base costs one insert of the window.
 */
export const TAIL_BYTES = 8 * 1024;

/** A base is written anew once older than this; it is kept this much longer than the hot store's TTL. */
const MAX_BASE_AGE_SECONDS = 12 * 60 * 60;

/** The stored entry as read (or as the caller loaded it), or, when there is none, what a new one starts from. */
type HotState =
  | { kind: 'stored'; memory: WorkingMemory & { version: string }; previous: HotValue }
  /** `over`: an entry whose base is gone, rebuilt, and written over its version. */
  | { kind: 'missing'; memory: WorkingMemory; over?: { version: string; previous: HotValue } };

/** A document's window as read: its base's messages (from the cache, else one read) then its tail. */
type Expand = (
  document: HotConversationDocument,
  version: string,
) => Promise<(WorkingMemory & { version: string }) | undefined>;

export function createHotWorkingMemory(options: {
  hot: HotStore;
  /** Long-term history (its headers and messages), read on a miss. */
  history: LongTermHistory;
  /** The most bytes of messages the entry keeps (hot-window.ts). */
  windowBytes: number;
  /** The most bytes of messages written since the last base (default TAIL_BYTES). */
  tailBytes?: number;
  /** The bases this process keeps (default: one cache of BASE_CACHE_BYTES for this store). */
  bases?: WorkingMemoryBaseCache;
  /** The hot store's TTL (default HOT_STORE_TTL_SECONDS): a base is kept longer. */
  hotTtlSeconds?: number;
  now?: () => number;
}): WorkingMemoryStore {
  const { hot, history, windowBytes } = options;
  const bases = options.bases ?? new WorkingMemoryBaseCache();
  const policy: CompactionPolicy = {
    tailBytes: options.tailBytes ?? TAIL_BYTES,
    maxBaseAgeMs: MAX_BASE_AGE_SECONDS * 1000,
    now: options.now ?? Date.now,
    newBaseId,
  };
  // Named only by documents written while it is younger than its age bound, which live the TTL after that write.
  const baseTtlSeconds = (options.hotTtlSeconds ?? HOT_STORE_TTL_SECONDS) + MAX_BASE_AGE_SECONDS;

  const expand: Expand = async (document, version) => {
    if (document.base === undefined) return toWorkingMemory(document, version, document.messages);
    const base = await readBase(hot, bases, document, document.base.id);
    if (base?.length !== document.base.count) return undefined;
    return toWorkingMemory(document, version, [...base.slice(document.base.skip), ...document.messages]);
  };

  /** The stored working memory, or else the newest messages of the long-term history; another user's → Forbidden. */
  async function readState(userId: string, sessionId: string): Promise<HotState> {
    const entry = await hot.read(sessionId, sessionId);
    if (entry !== undefined) {
      const document = fromHotEntry(hotConversationDocumentSchema, sessionId, entry, 'working memory');
      if (document.userId !== userId) throw new ForbiddenError('This conversation belongs to another user.');
      const memory = await expand(document, entry.version);
      if (memory !== undefined) return { kind: 'stored', memory, previous: entry.value };
      // Its base is gone (erased, or outlived): rebuilt as on a miss, with the tail, over the version read.
      const rebuilt = await rebuildWorkingMemory(history, userId, sessionId, windowBytes);
      const { base: _gone, ...tailOnly } = document;
      const { version: _version, ...kept } = toWorkingMemory(
        tailOnly,
        entry.version,
        fitHotWindow(mergeByOrdinal(rebuilt.messages, document.messages), windowBytes),
      );
      return {
        kind: 'missing',
        memory: { ...kept, messageCount: Math.max(kept.messageCount, rebuilt.messageCount) },
        over: { version: entry.version, previous: entry.value },
      };
    }
    return { kind: 'missing', memory: await rebuildWorkingMemory(history, userId, sessionId, windowBytes) };
  }

  /**
   * Writes `next` over the state read: a new base first when the window needs one, then the document (conditional
   * on the version read). Undefined when another writer got there first; a base written for this write then names
   * nothing and expires with its TTL (as it does when the process stops between the two writes).
   */
  async function save(
    state: HotState,
    next: WorkingMemory,
  ): Promise<(WorkingMemory & { version: string }) | undefined> {
    const placed = placeWindow(state.kind === 'stored' ? state.memory : undefined, next, policy);
    if (placed.base !== undefined) await writeBase(hot, bases, next, placed.base, baseTtlSeconds);
    const document = toHotDocument(placed.memory);
    // The value read travels with the version, so the store may send only the difference (the new messages).
    const condition: HotWriteCondition =
      state.kind === 'stored'
        ? { kind: 'version', version: state.memory.version, previous: state.previous }
        : state.over === undefined
          ? { kind: 'absent' }
          : { kind: 'version', ...state.over };
    const written = await hot.write(next.sessionId, next.sessionId, toHotValue(document), condition);
    if (written.kind === 'conflict') return undefined;
    const memory = toWorkingMemory(document, written.version, placed.memory.messages);
    if (state.kind === 'missing' && state.over === undefined)
      return (await completeMarks(hot, { document, memory }, expand)) ?? memory;
    return memory;
  }

  async function load(userId: string, sessionId: string): Promise<WorkingMemory> {
    for (let attempt = 0; attempt <= MAX_RETRIES; attempt += 1) {
      const state = await readState(userId, sessionId);
      if (state.kind === 'stored' || state.memory.messages.length === 0) return state.memory;
      // Undefined: another writer made or changed the entry first, and theirs is at least as new: read it.
      const saved = await save(state, state.memory);
      if (saved !== undefined) return saved;
    }
    throw new ConflictError(`The conversation ${sessionId} changed ${MAX_RETRIES + 1} times while loading.`);
  }

  /** The caller's copy, when it was stored, stands in for the first read (a missing one may have been rebuilt). */
  function baseState(
    userId: string,
    sessionId: string,
    base: WorkingMemory | undefined,
  ): HotState | undefined {
    return base?.version !== undefined && base.userId === userId && base.sessionId === sessionId
      ? {
          kind: 'stored',
          memory: { ...base, version: base.version },
          previous: toHotValue(toHotDocument(base)),
        }
      : undefined;
  }

  /**
   * Writes `change(current)` over the version read (or the caller's), reading again and retrying when another
   * writer got there first; `undefined` from change: nothing to write.
   */
  async function update(
    userId: string,
    sessionId: string,
    base: WorkingMemory | undefined,
    change: (current: WorkingMemory) => Promise<WorkingMemory | undefined> | WorkingMemory | undefined,
  ): Promise<WorkingMemory> {
    let known = baseState(userId, sessionId, base);
    for (let attempt = 0; attempt <= MAX_RETRIES; attempt += 1) {
      const state = known ?? (await readState(userId, sessionId));
      known = undefined;
      const next = await change(state.memory);
      if (next === undefined) return state.memory;
      const saved = await save(state, next);
      if (saved !== undefined) return saved;
    }
    throw new ConflictError(
      `The conversation ${sessionId} changed ${MAX_RETRIES + 1} times while saving; try again.`,
    );
  }

  return {
    load,

    append(userId, sessionId, messages, base, appendOptions) {
      return update(userId, sessionId, base, (current) => {
        const placed = placeTurn(current, messages, appendOptions?.branch, windowBytes);
        if (placed.kind === 'unchanged') return undefined;
        if (placed.kind === 'parent-moved') throw new PathMovedError(placed.parentChatMessageId);
        // The first prompt stored is the conversation's: a later one never replaces it.
        const systemPrompt = current.systemPrompt ?? appendOptions?.systemPrompt;
        return { ...current, ...placed.state, ...(systemPrompt ? { systemPrompt } : {}) };
      });
    },

    announceDigest(userId, sessionId, revision) {
      return markWorkingMemory(hot, { userId, sessionId }, { digestRevision: revision });
    },

    async findTurn(userId, sessionId, chatMessageId, base) {
      const memory =
        baseState(userId, sessionId, base)?.memory ?? (await readState(userId, sessionId)).memory;
      return findCommittedTurn(history, memory, chatMessageId);
    },

    async showPath(userId, sessionId, leaf, base) {
      // What history has stored (persistedCount) need not stay in working memory off the path.
      const header = await history.headers.get(userId, sessionId);
      const storedBelow = header?.userId === userId ? header.persistedCount : 0;
      return update(userId, sessionId, base, async (current) => {
        const window = await readPathWindow(history, userId, sessionId, {
          leaf,
          known: [...current.messages, ...(current.offPath ?? [])],
          storedBelow,
          windowBytes,
        });
        return { ...current, ...movePath(current, leaf, window, windowBytes, storedBelow) };
      });
    },
  };
}

/** Messages of both lists, each once (the later list's copy), in ordinal order. */
function mergeByOrdinal(
  older: readonly ConversationMessage[],
  newer: readonly ConversationMessage[],
): ConversationMessage[] {
  const byId = new Map<string, ConversationMessage>();
  for (const message of [...older, ...newer]) byId.set(message.messageId, message);
  return [...byId.values()].sort((a, b) => (a.ordinal ?? 0) - (b.ordinal ?? 0));
}

/** How many stopped turns the document remembers: a stop older than that was for a turn long over. */
const STOPS_KEPT = 16;

/**
 * Right after the entry was made: marks the stops recorded before (a stop recorded later finds the entry and marks
 * itself), then says the marks are complete. Until then a round reads the stop records. Returns working memory as
 * this leaves it, or undefined when it could not tell (the entry gone, or changing all the while).
 */
async function completeMarks(
  hot: HotStore,
  created: { document: HotConversationDocument; memory: WorkingMemory & { version: string } },
  expand: Expand,
): Promise<(WorkingMemory & { version: string }) | undefined> {
  const { sessionId, userId } = created.document;
  const recorded = (await hot.list(sessionId, turnCancellationDocumentId(''))).flatMap((entry) => {
    const stop = fromHotEntry(turnCancellationDocumentSchema, sessionId, entry, "a turn's cancellation");
    return stop.userId === userId ? [stop.chatMessageId] : [];
  });
  // The window's messages while the document is the one written here; one read again is expanded when it is done.
  let messages: readonly ConversationMessage[] | undefined = created.memory.messages;
  let current: { document: HotConversationDocument; version: string } | undefined = {
    document: created.document,
    version: created.memory.version,
  };
  for (let attempt = 0; current !== undefined && attempt <= MAX_RETRIES; attempt += 1) {
    const { document } = current;
    if (document.userId !== userId) return undefined;
    if (document.marksComplete === true)
      return messages === undefined
        ? expand(document, current.version)
        : toWorkingMemory(document, current.version, messages);
    const stopped = [...(document.stopped ?? [])];
    for (const id of recorded) if (!stopped.includes(id)) stopped.push(id);
    const complete: HotConversationDocument = {
      ...document,
      ...(stopped.length > 0 ? { stopped: stopped.slice(-STOPS_KEPT) } : {}),
      marksComplete: true,
    };
    const written = await hot.write(sessionId, sessionId, toHotValue(complete), {
      kind: 'version',
      version: current.version,
      previous: toHotValue(document),
    });
    if (written.kind === 'written')
      return messages === undefined
        ? expand(complete, written.version)
        : toWorkingMemory(complete, written.version, messages);
    const entry = await hot.read(sessionId, sessionId);
    messages = undefined;
    current =
      entry === undefined
        ? undefined
        : {
            document: fromHotEntry(hotConversationDocumentSchema, sessionId, entry, 'working memory'),
            version: entry.version,
          };
  }
  return undefined;
}

/** A mark working memory keeps beside a record: a turn's stop, the delete's start, or a digest's revision. */
type WorkingMemoryMark = { stopped: string } | { deletingAt: string } | { digestRevision: number };

/**
 * Marks a stop of one of its turns, or the start of its delete, in the conversation's working memory (written over
 * the version read, read again on a conflict), beside the record the caller wrote first. No entry (nothing stored,
 * or it expired) or another user's: nothing to mark, and a round that finds no entry reads the records instead.
 */
export async function markWorkingMemory(
  hot: HotStore,
  ref: { userId: string; sessionId: string },
  mark: WorkingMemoryMark,
): Promise<void> {
  for (let attempt = 0; attempt <= MAX_RETRIES; attempt += 1) {
    const entry = await hot.read(ref.sessionId, ref.sessionId);
    if (entry === undefined) return;
    const document = fromHotEntry(hotConversationDocumentSchema, ref.sessionId, entry, 'working memory');
    if (document.userId !== ref.userId) return;
    const marked = withMark(document, mark);
    if (marked === undefined) return;
    const written = await hot.write(ref.sessionId, ref.sessionId, toHotValue(marked), {
      kind: 'version',
      version: entry.version,
      previous: entry.value,
    });
    if (written.kind === 'written') return;
  }
  throw new ConflictError(
    `The conversation ${ref.sessionId} kept changing while a stop, a delete or a digest was marked.`,
  );
}

/** The document with the mark in it; undefined when it holds it already (or, for a digest, a newer revision). */
function withMark(
  document: HotConversationDocument,
  mark: WorkingMemoryMark,
): HotConversationDocument | undefined {
  if ('stopped' in mark) {
    const stopped = document.stopped ?? [];
    return stopped.includes(mark.stopped)
      ? undefined
      : { ...document, stopped: [...stopped, mark.stopped].slice(-STOPS_KEPT) };
  }
  if ('deletingAt' in mark)
    return document.deletingAt === undefined ? { ...document, deletingAt: mark.deletingAt } : undefined;
  return (document.digestRevision ?? 0) >= mark.digestRevision
    ? undefined
    : { ...document, digestRevision: mark.digestRevision };
}
