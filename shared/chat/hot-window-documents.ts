// Working memory as stored: a small document per session holding the window's newest messages (its tail) and
// naming an immutable base document with the older ones, so a turn rewrites the tail only. Pure: which messages go
// where, when a new base is written, and the conversions between the documents and the logical working memory.
import { isDeepStrictEqual } from 'node:util';
import { storedBytes } from '../conversation/hot-window.js';
import type { ConversationMessage } from '../conversation/messages.js';
import type { WorkingMemory, WorkingMemoryLayout } from '../conversation/working-memory-store.js';
import type { HotConversationDocument } from './contracts/documents.js';

/** When a new base is written. */
export interface CompactionPolicy {
  /** The most bytes of messages the tail holds; past them, the whole window goes to a new base. */
  tailBytes: number;
  /** A base older than this is written anew with the next write (it must outlive every document naming it). */
  maxBaseAgeMs: number;
  now: () => number;
  newBaseId: () => string;
}

/** The new base a write needs before the working memory document that names it. */
export interface NewBase {
  id: string;
  messages: ConversationMessage[];
  createdAt: string;
}

/**
 * Where `next`'s messages go, given how `current` (as read) keeps its own: the same base with more of its first
 * messages skipped and a new tail, when `next` starts with what the base still gives and the tail stays within its
 * bytes; else a new base holding the whole window (none while the window fits in a tail).
 */
export function placeWindow(
  current: WorkingMemory | undefined,
  next: WorkingMemory,
  policy: CompactionPolicy,
): { memory: WorkingMemory; base?: NewBase } {
  const { layout: _stale, ...rest } = next;
  const layout = current?.layout;
  if (layout !== undefined && policy.now() - Date.parse(layout.createdAt) < policy.maxBaseAgeMs) {
    const fromBase = current!.messages.slice(0, layout.count - layout.skip);
    const dropped = droppedFromFront(fromBase, next.messages);
    const kept = fromBase.length - dropped;
    const tail = next.messages.slice(kept);
    if (storedBytes(tail) <= policy.tailBytes)
      return kept === 0
        ? { memory: rest }
        : { memory: { ...rest, layout: { ...layout, skip: layout.skip + dropped } } };
  }
  if (storedBytes(next.messages) <= policy.tailBytes) return { memory: rest };
  const base: NewBase = {
    id: policy.newBaseId(),
    messages: next.messages,
    createdAt: new Date(policy.now()).toISOString(),
  };
  const fresh: WorkingMemoryLayout = {
    baseId: base.id,
    count: base.messages.length,
    skip: 0,
    createdAt: base.createdAt,
  };
  return { memory: { ...rest, layout: fresh }, base };
}

/**
 * How many of `fromBase`'s first messages `next` leaves out: those before `next`'s first message, when `next` starts
 * with all the rest of them unchanged; else all of them (the path moved, or a message of the base changed), and the
 * tail must hold the whole window. Message ids are unique, so only that one place can be where `next` starts.
 */
function droppedFromFront(
  fromBase: readonly ConversationMessage[],
  next: readonly ConversationMessage[],
): number {
  const first = next[0];
  const dropped = first === undefined ? -1 : fromBase.findIndex((m) => m.messageId === first.messageId);
  const kept = fromBase.length - dropped;
  if (dropped < 0 || kept > next.length) return fromBase.length;
  for (let i = 0; i < kept; i += 1)
    if (!isDeepStrictEqual(fromBase[dropped + i], next[i])) return fromBase.length;
  return dropped;
}

/** The working memory a document holds, given the messages of its window (the base's kept ones, then the tail). */
export function toWorkingMemory(
  document: HotConversationDocument,
  version: string,
  messages: readonly ConversationMessage[],
): WorkingMemory & { version: string } {
  return {
    sessionId: document.sessionId,
    userId: document.userId,
    messages: [...messages],
    messageCount: document.messageCount ?? messages.length,
    createdAt: document.createdAt,
    version,
    ...(document.systemPrompt ? { systemPrompt: document.systemPrompt } : {}),
    ...(document.path ? { path: document.path } : {}),
    ...(document.offPath ? { offPath: [...document.offPath] } : {}),
    ...(document.digestRevision === undefined ? {} : { digestRevision: document.digestRevision }),
    ...(document.marksComplete
      ? {
          marks: {
            stopped: [...(document.stopped ?? [])],
            ...(document.deletingAt === undefined ? {} : { deletingAt: document.deletingAt }),
          },
        }
      : {}),
    ...(document.base
      ? {
          layout: {
            baseId: document.base.id,
            count: document.base.count,
            skip: document.base.skip,
            createdAt: document.base.createdAt,
          },
        }
      : {}),
  };
}

/**
 * The document that keeps `memory`: its tail after what its base gives. Dates come from the stored conversation or
 * the messages themselves (no clock): created when the conversation was (else with its first message), active at
 * its last message.
 */
export function toHotDocument(memory: WorkingMemory): HotConversationDocument {
  const first = memory.messages[0]?.timestamp ?? '';
  const last = memory.messages.at(-1)?.timestamp ?? first;
  const { layout } = memory;
  return {
    id: memory.sessionId,
    sessionId: memory.sessionId,
    userId: memory.userId,
    messages: layout === undefined ? memory.messages : memory.messages.slice(layout.count - layout.skip),
    createdAt: memory.createdAt ?? first,
    lastActivity: last,
    messageCount: memory.messageCount,
    ...(memory.systemPrompt ? { systemPrompt: memory.systemPrompt } : {}),
    ...(memory.path ? { path: memory.path } : {}),
    ...(memory.offPath && memory.offPath.length > 0 ? { offPath: memory.offPath } : {}),
    ...(memory.marks && memory.marks.stopped.length > 0 ? { stopped: [...memory.marks.stopped] } : {}),
    ...(memory.marks?.deletingAt === undefined ? {} : { deletingAt: memory.marks.deletingAt }),
    ...(memory.marks ? { marksComplete: true as const } : {}),
    ...(memory.digestRevision === undefined ? {} : { digestRevision: memory.digestRevision }),
    ...(layout === undefined
      ? {}
      : {
          base: { id: layout.baseId, count: layout.count, skip: layout.skip, createdAt: layout.createdAt },
        }),
  };
}
