// The Cosmos DB adapter of WorkingMemoryStore: one document per session in the hot container (id = sessionId,
// 24 h TTL refreshed by every write), bounded by a byte budget, holding the active branch path's newest messages,
// rebuilt on a miss from long-term history (its header and newest messages along the path, through history's
// ports). Point reads and writes only on the hot side; concurrent appends and path moves are serialised with
// If-Match.
import type { Container, PatchOperation } from '@azure/cosmos';
import {
  cosmosFailure,
  cosmosStatus,
  readThroughCache,
  StoredItemCache,
  type StoredItem,
} from '../../cosmos/adapters/cosmos-items.js';
import { RETURN_MINIMAL } from '../../cosmos/adapters/cosmos-patch.js';
import { guardedItem } from '../../cosmos/adapters/guarded-item.js';
import { ConflictError, ForbiddenError } from '../../errors.js';
import { movePath, placeTurn } from '../../conversation/active-path.js';
import {
  hotConversationDocumentSchema,
  type HotConversationDocument as HotDocument,
} from '../contracts/documents.js';
import type { ConversationMessage } from '../../conversation/messages.js';
import {
  findCommittedTurn,
  readPathWindow,
  rebuildWorkingMemory,
  type LongTermHistory,
} from '../working-memory-rebuild.js';
import {
  PathMovedError,
  type WorkingMemory,
  type WorkingMemoryStore,
} from '../../conversation/working-memory-store.js';

/** Reloads and retries after a concurrent write took the document first. */
const MAX_RETRIES = 5;

/**
 * The hot document as read (or as the caller loaded it: `version` is its etag), or, when there is none, what a
 * new one starts from.
 */
type HotState =
  | { kind: 'stored'; memory: WorkingMemory & { version: string } }
  | { kind: 'missing'; memory: WorkingMemory };

export function createCosmosWorkingMemoryStore(options: {
  /** The hot store (`hot-conversations`). */
  hot: Container;
  /** Long-term history (its headers and messages), read on a miss. */
  history: LongTermHistory;
  /** The most bytes of messages the hot document keeps (hot-window.ts). */
  windowBytes: number;
  /** How many sessions' documents this process remembers for conditional reads (default 1,000). */
  cachedSessions?: number;
}): WorkingMemoryStore {
  const { hot, history, windowBytes } = options;
  const cache = new StoredItemCache<HotDocument>(options.cachedSessions ?? 1_000);

  /** The hot document, or else the newest messages of the long-term history; another user's → Forbidden. */
  async function readState(userId: string, sessionId: string): Promise<HotState> {
    const document = await readHot(hot, cache, sessionId);
    if (document !== undefined) {
      assertOwner(document.resource, userId);
      return { kind: 'stored', memory: toWorkingMemory(document.resource, document.etag) };
    }
    return { kind: 'missing', memory: await rebuildWorkingMemory(history, userId, sessionId, windowBytes) };
  }

  async function load(userId: string, sessionId: string): Promise<WorkingMemory> {
    const state = await readState(userId, sessionId);
    if (state.kind === 'stored' || state.memory.messages.length === 0) return state.memory;
    const created = await writeHot(hot, cache, toHotDocument(state.memory), undefined);
    // 'conflict': another writer created the hot copy first, and theirs is at least as new: read it.
    return created === 'conflict' ? load(userId, sessionId) : toWorkingMemory(created.resource, created.etag);
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
      const current = state.memory;
      const next = await change(current);
      if (next === undefined) return current;
      const previous =
        state.kind === 'stored'
          ? {
              etag: state.memory.version,
              messages: current.messages,
              offPath: current.offPath ?? [],
              hadSystemPrompt: current.systemPrompt !== undefined,
            }
          : undefined;
      const written = await writeHot(hot, cache, toHotDocument(next), previous);
      if (written !== 'conflict') return toWorkingMemory(written.resource, written.etag);
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

/** A point read of the hot document, conditional when this process knows a version of it. */
function readHot(
  container: Container,
  cache: StoredItemCache<HotDocument>,
  sessionId: string,
): Promise<StoredItem<HotDocument> | undefined> {
  return readThroughCache(
    cache,
    sessionId,
    container,
    sessionId,
    sessionId,
    'working memory',
    hotConversationDocumentSchema,
  );
}

function assertOwner(document: HotDocument, userId: string): void {
  if (document.userId !== userId) throw new ForbiddenError('This conversation belongs to another user.');
}

function toWorkingMemory(document: HotDocument, etag: string): WorkingMemory & { version: string } {
  return {
    sessionId: document.sessionId,
    userId: document.userId,
    messages: [...document.messages],
    messageCount: document.messageCount ?? document.messages.length,
    createdAt: document.createdAt,
    version: etag,
    ...(document.systemPrompt ? { systemPrompt: document.systemPrompt } : {}),
    ...(document.path ? { path: document.path } : {}),
    ...(document.offPath ? { offPath: [...document.offPath] } : {}),
  };
}

/**
 * Dates come from the stored conversation or the messages themselves (no clock): created when the
 * conversation was (else with its first message), active at its last message.
 */
function toHotDocument(memory: WorkingMemory): HotDocument {
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
  };
}

/**
 * What a change is conditioned on and patched from: the version read, its messages and off-path messages, whether
 * it had a prompt.
 */
interface PreviousVersion {
  etag: string;
  messages: readonly ConversationMessage[];
  offPath: readonly ConversationMessage[];
  hadSystemPrompt: boolean;
}

/** Cosmos DB applies at most this many operations in one patch. */
const MAX_PATCH_OPERATIONS = 10;

/**
 * Creates the hot document (no previous version) or changes the version read (If-Match): a patch that removes the
 * messages that left the window and adds the new ones, so a turn sends and receives bytes for its own messages
 * only, not the whole window (a replace when a patch would take too many operations). 'conflict' when another
 * writer got there first (409 on create; 412, or 404 after an expiry, on change).
 */
async function writeHot(
  container: Container,
  cache: StoredItemCache<HotDocument>,
  document: HotDocument,
  previous: PreviousVersion | undefined,
): Promise<StoredItem<HotDocument> | 'conflict'> {
  // A change answers with headers only (RETURN_MINIMAL); a create, once per conversation, gets the usual answer,
  // since the SDK reads the created item's id from it. The guard refuses a bad id before the try, as a bug.
  const stored =
    previous === undefined
      ? undefined
      : { item: guardedItem(container, document.id, document.sessionId), previous };
  try {
    let etag: string;
    if (stored === undefined) {
      ({ etag } = await container.items.create(document));
    } else {
      const ifMatch = {
        ...RETURN_MINIMAL,
        accessCondition: { type: 'IfMatch', condition: stored.previous.etag },
      } as const;
      const operations = patchOperations(stored.previous, document);
      ({ etag } =
        operations === undefined
          ? await stored.item.replace(document, ifMatch)
          : await stored.item.patch(operations, ifMatch));
    }
    const item = { resource: document, etag };
    cache.set(document.sessionId, item);
    return item;
  } catch (error) {
    const status = cosmosStatus(error);
    if (status === 409 || status === 412 || status === 404) {
      cache.delete(document.sessionId);
      return 'conflict';
    }
    throw cosmosFailure('writing working memory', error);
  }
}

/** The patch that turns the stored messages into the document's, or undefined when a patch cannot say it briefly. */
function patchOperations(previous: PreviousVersion, document: HotDocument): PatchOperation[] | undefined {
  // A move of the path (rare: an edit, a regenerate, a switch) rewrites the off-path messages: a replace says it.
  const offPath = document.offPath ?? [];
  if (
    offPath.length !== previous.offPath.length ||
    offPath.some((message, i) => message.messageId !== previous.offPath[i]?.messageId)
  )
    return undefined;
  const stored = previous.messages;
  const next = document.messages;
  // The window keeps a suffix of stored + added: find how many stored messages left it.
  const removed = stored.findIndex((message) => message.messageId === next[0]?.messageId);
  const dropped = removed === -1 ? stored.length : removed;
  const kept = stored.length - dropped;
  if (next.slice(0, kept).some((message, i) => message.messageId !== stored[dropped + i]?.messageId))
    return undefined;
  const added = next.slice(kept);
  const operations: PatchOperation[] = [
    ...Array.from({ length: dropped }, (): PatchOperation => ({ op: 'remove', path: '/messages/0' })),
    ...added.map((message): PatchOperation => ({ op: 'add', path: '/messages/-', value: message })),
    { op: 'set', path: '/lastActivity', value: document.lastActivity },
    { op: 'set', path: '/messageCount', value: document.messageCount },
    ...(document.path === undefined
      ? []
      : [{ op: 'set', path: '/path', value: document.path } satisfies PatchOperation]),
    // Set once, by the commit that first has one (a stored prompt is never written again).
    ...(document.systemPrompt !== undefined && !previous.hadSystemPrompt
      ? [{ op: 'set', path: '/systemPrompt', value: document.systemPrompt } satisfies PatchOperation]
      : []),
  ];
  return operations.length <= MAX_PATCH_OPERATIONS ? operations : undefined;
}
