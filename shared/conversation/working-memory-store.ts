// The port of working memory: the recent messages of an active conversation's active branch path, bounded by the
// prompt's token budget (hot-window.ts), one point read and one point write per turn; an edit, a regenerate or a
// switch moves it to another path (active-path.ts). Kept in the hot store by chat/hot-working-memory.ts.
import type { FoundTurn, PathLeaf } from './active-path.js';
import type { ActivePath, TurnBranch } from './branches.js';
import type { ConversationMessage, SystemPrompt } from './messages.js';

export interface WorkingMemory {
  sessionId: string;
  userId: string;
  /** Oldest first; each with its ordinal once stored. */
  messages: ConversationMessage[];
  /** Messages the conversation has had in all, in or out of the window: the next message's ordinal. */
  messageCount: number;
  /** When the conversation began; absent when nothing is stored yet. */
  createdAt?: string;
  /** The stored version this was read at (opaque); absent when nothing is stored yet. */
  version?: string;
  /**
   * The system prompt the conversation's first turn sent (personalised or basic): every later turn sends the same.
   * Kept apart from the window, so trimming never drops it. Absent before the first commit, and in conversations
   * begun before prompts were kept.
   */
  systemPrompt?: SystemPrompt;
  /** The active path (its leaf and branch); absent in documents written before branches (then: the newest turn). */
  path?: ActivePath;
  /** Recent messages of other branches the history worker may not have stored yet (contracts.ts `offPath`). */
  offPath?: ConversationMessage[];
  /**
   * The stops and the delete marked in the stored document beside their own records (the turns stopped lately, and
   * whether the conversation's delete began), so a round reads them with working memory. Only when read from a
   * stored document: absent when nothing was stored (a new or rebuilt conversation), and the records are read instead.
   */
  marks?: WorkingMemoryMarks;
  /**
   * How the store keeps the messages (opaque to callers): given back with the memory as a write's `base`, it lets
   * the store write only what changed. Absent when the store keeps them all in one document.
   */
  layout?: WorkingMemoryLayout;
  /**
   * The newest revision of the conversation's digest the history worker began to write: a round holding that
   * revision's digest needs no read of it; 0 when the conversation has none (its entry began with it). Absent when
   * unknown (an entry rebuilt after it expired, or older than the mark): the round reads the digest.
   */
  digestRevision?: number;
}

/**
 * Working memory's older messages kept apart in an immutable document: its id, how many messages it holds, how many
 * of its first ones have since left the window (the window starts at the next), and when it was written.
 */
export interface WorkingMemoryLayout {
  baseId: string;
  count: number;
  skip: number;
  createdAt: string;
}

export interface WorkingMemoryMarks {
  stopped: readonly string[];
  deletingAt?: string;
}

export interface AppendOptions {
  /** The conversation's system prompt, stored when working memory has none yet; one already stored stays. */
  systemPrompt?: SystemPrompt;
  /**
   * The branch the turn took when it began (its parent, and for an edit or a regenerate its fork); the gaps are
   * computed again for the ordinals its messages get. Absent: the turn continues the active path.
   */
  branch?: TurnBranch;
}

/** The turn's parent is no longer the active path's leaf (the path moved while it ran): move back, then commit. */
export class PathMovedError extends Error {
  constructor(readonly parentChatMessageId: string) {
    super(`The active path no longer ends at turn ${parentChatMessageId}.`);
  }
}

export interface WorkingMemoryStore {
  /**
   * Hot store point read; on a miss rebuilds from the long-term store (and writes the hot copy); a new
   * conversation → empty messages. A document of another user → ForbiddenError.
   */
  load(userId: string, sessionId: string): Promise<WorkingMemory>;
  /**
   * Appends the messages whose messageId is not stored yet (a retried commit adds nothing twice), in order, each
   * given the next ordinal, then
   * keeps the window that fits the byte budget; every write refreshes the 24 h TTL. `base`, the memory as this
   * caller loaded it, saves a read: it is written over only if still current (else reload and retry, up to 5
   * times). Returns the messages as stored after the commit. The messages take the turn's branch and the turn
   * becomes the active path's leaf (active-path.ts placeTurn); PathMovedError when its parent is no longer the leaf.
   */
  append(
    userId: string,
    sessionId: string,
    messages: readonly ConversationMessage[],
    base?: WorkingMemory,
    options?: AppendOptions,
  ): Promise<WorkingMemory>;
  /**
   * A committed turn of the conversation, from the window, the off-path messages or long-term history (by id, a
   * point read each); undefined when none of them has it (unknown, not committed yet, or committed but neither in
   * working memory nor stored yet). `base` saves the hot read.
   */
  findTurn(
    userId: string,
    sessionId: string,
    chatMessageId: string,
    base?: WorkingMemory,
  ): Promise<FoundTurn | undefined>;
  /**
   * Makes the path that ends at `leaf` the active one: the window becomes that path's newest messages (from working
   * memory where they are, else from long-term history along the path), and what leaves it is kept off the path
   * until history has it. NotReadyError (409) when a message of the path is neither in working memory nor stored
   * yet (the history worker is catching up).
   */
  showPath(userId: string, sessionId: string, leaf: PathLeaf, base?: WorkingMemory): Promise<WorkingMemory>;
  /**
   * Marks that the digest's `revision` is about to be written (kept when a newer one is marked already); nothing when
   * there is no entry (a round then reads the digest anyway).
   */
  announceDigest(userId: string, sessionId: string, revision: number): Promise<void>;
}
