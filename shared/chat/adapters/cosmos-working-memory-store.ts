// The Cosmos DB adapter of WorkingMemoryStore: one document per session in the hot container (id = sessionId,
// 24 h TTL refreshed by every write), bounded by a byte budget, rebuilt on a miss from the session's long-term
// document (history's contract). Point reads and writes only; concurrent appends are serialised with If-Match.
import type { Container } from '@azure/cosmos';
import {
  cosmosFailure,
  cosmosStatus,
  readItem,
  type StoredItem,
} from '../../cosmos/adapters/cosmos-items.js';
import { ConflictError, ForbiddenError } from '../../errors.js';
import { conversationDocumentSchema } from '../../history/contracts.js';
import {
  hotConversationDocumentSchema,
  type ConversationMessage,
  type HotConversationDocument as HotDocument,
} from '../contracts.js';
import { fitHotWindow } from '../hot-window.js';
import type { WorkingMemory, WorkingMemoryStore } from '../working-memory-store.js';

/** Reloads and retries after a concurrent write took the document first. */
const MAX_RETRIES = 5;

/** The hot document as read (or as the caller loaded it), or, when there is none, what a new one starts from. */
type HotState =
  | { kind: 'stored'; document: StoredItem<HotDocument> }
  | { kind: 'known'; memory: WorkingMemory; etag: string }
  | { kind: 'missing'; base: WorkingMemory; createdAt: string | undefined };

function currentMemory(state: HotState): WorkingMemory {
  if (state.kind === 'stored') return toWorkingMemory(state.document.resource, state.document.etag);
  return state.kind === 'known' ? state.memory : state.base;
}

export function createCosmosWorkingMemoryStore(options: {
  /** The hot store (`hot-conversations`). */
  hot: Container;
  /** The long-term history (`conversations`). */
  longTerm: Container;
  /** The most bytes of messages the hot document keeps (hot-window.ts). */
  windowBytes: number;
}): WorkingMemoryStore {
  const { hot, longTerm, windowBytes } = options;

  /** The hot document, or else the newest messages of the long-term history; another user's → Forbidden. */
  async function readState(userId: string, sessionId: string): Promise<Exclude<HotState, { kind: 'known' }>> {
    const document = await readItem(
      hot,
      sessionId,
      sessionId,
      'working memory',
      hotConversationDocumentSchema,
    );
    if (document !== undefined) {
      assertOwner(document.resource, userId);
      return { kind: 'stored', document };
    }
    const history = await readItem(
      longTerm,
      sessionId,
      userId,
      'conversation history',
      conversationDocumentSchema,
    );
    const messages = fitHotWindow(history?.resource.messages ?? [], windowBytes);
    return { kind: 'missing', base: { sessionId, userId, messages }, createdAt: history?.resource.createdAt };
  }

  async function load(userId: string, sessionId: string): Promise<WorkingMemory> {
    const state = await readState(userId, sessionId);
    if (state.kind === 'stored') return toWorkingMemory(state.document.resource, state.document.etag);
    if (state.base.messages.length === 0) return state.base;
    const created = await writeHot(hot, toHotDocument(state.base, state.createdAt), undefined);
    // 'conflict': another writer created the hot copy first, and theirs is at least as new: read it.
    return created === 'conflict' ? load(userId, sessionId) : toWorkingMemory(created.resource, created.etag);
  }

  return {
    load,

    async append(userId, sessionId, messages, base) {
      // The caller's copy stands in for the first read when it was stored (a missing one may have been rebuilt).
      let known: HotState | undefined =
        base?.version !== undefined && base.userId === userId && base.sessionId === sessionId
          ? { kind: 'known', memory: base, etag: base.version }
          : undefined;
      for (let attempt = 0; attempt <= MAX_RETRIES; attempt += 1) {
        const state = known ?? (await readState(userId, sessionId));
        known = undefined;
        const current = currentMemory(state);
        const merged = mergeMessages(current.messages, messages, windowBytes);
        if (merged === undefined) return current;
        const next: WorkingMemory = { sessionId, userId, messages: merged };
        const [etag, createdAt] =
          state.kind === 'stored'
            ? [state.document.etag, state.document.resource.createdAt]
            : state.kind === 'known'
              ? [state.etag, state.memory.createdAt]
              : [undefined, state.createdAt];
        const written = await writeHot(hot, toHotDocument(next, createdAt), etag);
        if (written !== 'conflict') return toWorkingMemory(written.resource, written.etag);
      }
      throw new ConflictError(
        `The conversation ${sessionId} changed ${MAX_RETRIES + 1} times while saving; try again.`,
      );
    },
  };
}

/** The stored messages followed by the new ones not stored yet, in the window; undefined when nothing is new. */
function mergeMessages(
  stored: readonly ConversationMessage[],
  incoming: readonly ConversationMessage[],
  windowBytes: number,
): ConversationMessage[] | undefined {
  const seen = new Set(stored.map((message) => message.messageId));
  const added: ConversationMessage[] = [];
  for (const message of incoming) {
    if (seen.has(message.messageId)) continue;
    seen.add(message.messageId);
    added.push(message);
  }
  return added.length === 0 ? undefined : fitHotWindow([...stored, ...added], windowBytes);
}

function assertOwner(document: HotDocument, userId: string): void {
  if (document.userId !== userId) throw new ForbiddenError('This conversation belongs to another user.');
}

function toWorkingMemory(document: HotDocument, etag?: string): WorkingMemory {
  return {
    sessionId: document.sessionId,
    userId: document.userId,
    messages: document.messages,
    createdAt: document.createdAt,
    ...(etag === undefined ? {} : { version: etag }),
  };
}

/**
 * Dates come from the stored conversation or the messages themselves (no clock): created when the
 * conversation was (else with its first message), active at its last message.
 */
function toHotDocument(memory: WorkingMemory, createdAt: string | undefined): HotDocument {
  const first = memory.messages[0]?.timestamp ?? '';
  const last = memory.messages.at(-1)?.timestamp ?? first;
  return {
    id: memory.sessionId,
    sessionId: memory.sessionId,
    userId: memory.userId,
    messages: memory.messages,
    createdAt: createdAt ?? first,
    lastActivity: last,
  };
}

/**
 * Creates the hot document (etag undefined) or replaces the version read (If-Match etag). 'conflict' when
 * another writer got there first (409 on create; 412, or 404 after an expiry, on replace).
 */
async function writeHot(
  container: Container,
  document: HotDocument,
  etag: string | undefined,
): Promise<StoredItem<HotDocument> | 'conflict'> {
  try {
    const response =
      etag === undefined
        ? await container.items.create(document)
        : await container
            .item(document.id, document.sessionId)
            .replace(document, { accessCondition: { type: 'IfMatch', condition: etag } });
    return { resource: response.resource ?? document, etag: response.etag };
  } catch (error) {
    const status = cosmosStatus(error);
    if (status === 409 || status === 412 || status === 404) return 'conflict';
    throw cosmosFailure('writing working memory', error);
  }
}
