// Working memory over the hot store: one entry per session (key = the session id), the active path's newest
// messages within a byte budget, rebuilt from long-term history on a miss; appends and path moves are conditional
// writes over the version read, read again and retried when another writer got there first.
import type { HotStore } from '../conversation/hot-store.js';
import { ConflictError, ForbiddenError } from '../errors.js';
import { movePath, placeTurn } from '../conversation/active-path.js';
import {
  hotConversationDocumentSchema,
  turnCancellationDocumentId,
  turnCancellationDocumentSchema,
  type HotConversationDocument,
} from './contracts/documents.js';
import { fromHotEntry, toHotValue } from './hot-documents.js';
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

/** The entry as read (or as the caller loaded it), or, when there is none, what a new one starts from. */
type HotState =
  | { kind: 'stored'; memory: WorkingMemory & { version: string } }
  | { kind: 'missing'; memory: WorkingMemory };

export function createHotWorkingMemory(options: {
  hot: HotStore;
  /** Long-term history (its headers and messages), read on a miss. */
  history: LongTermHistory;
  /** The most bytes of messages the entry keeps (hot-window.ts). */
  windowBytes: number;
}): WorkingMemoryStore {
  const { hot, history, windowBytes } = options;

  /** The stored working memory, or else the newest messages of the long-term history; another user's → Forbidden. */
  async function readState(userId: string, sessionId: string): Promise<HotState> {
    const entry = await hot.read(sessionId, sessionId);
    if (entry !== undefined) {
      const document = fromHotEntry(hotConversationDocumentSchema, sessionId, entry, 'working memory');
      if (document.userId !== userId) throw new ForbiddenError('This conversation belongs to another user.');
      return { kind: 'stored', memory: toWorkingMemory(document, entry.version) };
    }
    return { kind: 'missing', memory: await rebuildWorkingMemory(history, userId, sessionId, windowBytes) };
  }

  async function load(userId: string, sessionId: string): Promise<WorkingMemory> {
    const state = await readState(userId, sessionId);
    if (state.kind === 'stored' || state.memory.messages.length === 0) return state.memory;
    const document = toHotDocument(state.memory);
    const written = await hot.write(sessionId, sessionId, toHotValue(document), { kind: 'absent' });
    // A conflict: another writer created the entry first, and theirs is at least as new: read it.
    if (written.kind === 'conflict') return load(userId, sessionId);
    const completed = await completeMarks(hot, document, written.version);
    return completed ?? toWorkingMemory(document, written.version);
  }

  /** The caller's copy, when it was stored, stands in for the first read (a missing one may have been rebuilt). */
  function baseState(
    userId: string,
    sessionId: string,
    base: WorkingMemory | undefined,
  ): HotState | undefined {
    return base?.version !== undefined && base.userId === userId && base.sessionId === sessionId
      ? { kind: 'stored', memory: { ...base, version: base.version } }
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
      const document = toHotDocument(next);
      // The value read travels with the version, so the store may send only the difference (the new messages).
      const written = await hot.write(
        sessionId,
        sessionId,
        toHotValue(document),
        state.kind === 'stored'
          ? {
              kind: 'version',
              version: state.memory.version,
              previous: toHotValue(toHotDocument(state.memory)),
            }
          : { kind: 'absent' },
      );
      if (written.kind === 'written')
        return (
          (state.kind === 'missing' ? await completeMarks(hot, document, written.version) : undefined) ??
          toWorkingMemory(document, written.version)
        );
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

function toWorkingMemory(
  document: HotConversationDocument,
  version: string,
): WorkingMemory & { version: string } {
  return {
    sessionId: document.sessionId,
    userId: document.userId,
    messages: [...document.messages],
    messageCount: document.messageCount ?? document.messages.length,
    createdAt: document.createdAt,
    version,
    ...(document.systemPrompt ? { systemPrompt: document.systemPrompt } : {}),
    ...(document.path ? { path: document.path } : {}),
    ...(document.offPath ? { offPath: [...document.offPath] } : {}),
    ...(document.marksComplete
      ? {
          marks: {
            stopped: [...(document.stopped ?? [])],
            ...(document.deletingAt === undefined ? {} : { deletingAt: document.deletingAt }),
          },
        }
      : {}),
  };
}

/**
 * Dates come from the stored conversation or the messages themselves (no clock): created when the
 * conversation was (else with its first message), active at its last message.
 */
function toHotDocument(memory: WorkingMemory): HotConversationDocument {
  const first = memory.messages[0]?.timestamp ?? '';
  const last = memory.messages.at(-1)?.timestamp ?? first;
  return {
    id: memory.sessionId,
    sessionId: memory.sessionId,
    userId: memory.userId,
    messages: memory.messages,
    createdAt: memory.createdAt ?? first,
    lastActivity: last,
    messageCount: memory.messageCount,
    ...(memory.systemPrompt ? { systemPrompt: memory.systemPrompt } : {}),
    ...(memory.path ? { path: memory.path } : {}),
    ...(memory.offPath && memory.offPath.length > 0 ? { offPath: memory.offPath } : {}),
    ...(memory.marks && memory.marks.stopped.length > 0 ? { stopped: [...memory.marks.stopped] } : {}),
    ...(memory.marks?.deletingAt === undefined ? {} : { deletingAt: memory.marks.deletingAt }),
    ...(memory.marks ? { marksComplete: true as const } : {}),
  };
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
  created: HotConversationDocument,
  version: string,
): Promise<(WorkingMemory & { version: string }) | undefined> {
  const { sessionId, userId } = created;
  const recorded = (await hot.list(sessionId, turnCancellationDocumentId(''))).flatMap((entry) => {
    const stop = fromHotEntry(turnCancellationDocumentSchema, sessionId, entry, "a turn's cancellation");
    return stop.userId === userId ? [stop.chatMessageId] : [];
  });
  let current: { document: HotConversationDocument; version: string } | undefined = {
    document: created,
    version,
  };
  for (let attempt = 0; current !== undefined && attempt <= MAX_RETRIES; attempt += 1) {
    const { document } = current;
    if (document.userId !== userId) return undefined;
    if (document.marksComplete === true) return toWorkingMemory(document, current.version);
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
    if (written.kind === 'written') return toWorkingMemory(complete, written.version);
    const entry = await hot.read(sessionId, sessionId);
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

/**
 * Marks a stop of one of its turns, or the start of its delete, in the conversation's working memory (written over
 * the version read, read again on a conflict), beside the record the caller wrote first. No entry (nothing stored,
 * or it expired) or another user's: nothing to mark, and a round that finds no entry reads the records instead.
 */
export async function markWorkingMemory(
  hot: HotStore,
  ref: { userId: string; sessionId: string },
  mark: { stopped: string } | { deletingAt: string },
): Promise<void> {
  for (let attempt = 0; attempt <= MAX_RETRIES; attempt += 1) {
    const entry = await hot.read(ref.sessionId, ref.sessionId);
    if (entry === undefined) return;
    const document = fromHotEntry(hotConversationDocumentSchema, ref.sessionId, entry, 'working memory');
    if (document.userId !== ref.userId) return;
    const stopped = document.stopped ?? [];
    if ('stopped' in mark ? stopped.includes(mark.stopped) : document.deletingAt !== undefined) return;
    const marked: HotConversationDocument =
      'stopped' in mark
        ? { ...document, stopped: [...stopped, mark.stopped].slice(-STOPS_KEPT) }
        : { ...document, deletingAt: mark.deletingAt };
    const written = await hot.write(ref.sessionId, ref.sessionId, toHotValue(marked), {
      kind: 'version',
      version: entry.version,
      previous: entry.value,
    });
    if (written.kind === 'written') return;
  }
  throw new ConflictError(
    `The conversation ${ref.sessionId} kept changing while a stop or a delete was marked.`,
  );
}
