// Working memory along a branch path (contracts.ts "Branches"): which turn is the active path's leaf, the branch a
// new turn takes from it, what a commit does to the window (it holds the active path only), and what a move to
// another path keeps. Pure: the Cosmos DB adapter, its in-memory twin and the turn's steps decide alike.
import { branchOf, gapsAfter, onPath } from './branch-path.js';
import { MAIN_BRANCH, type ActivePath, type TurnBranch } from './branches.js';
import type { ConversationMessage } from './messages.js';
import { fitHotWindow } from './hot-window.js';

/** A committed turn that ends a path: its branch, and the ordinal of its last message. */
export interface PathLeaf {
  chatMessageId: string;
  branch: TurnBranch;
  lastOrdinal: number;
}

/** A committed turn as found in working memory or long-term history: its messages (user first) and its place. */
export interface FoundTurn extends PathLeaf {
  messages: (ConversationMessage & { ordinal: number })[];
  firstOrdinal: number;
}

/** What a commit or a move reads and writes of working memory. */
export interface PathState {
  /** The window: the newest messages of the active path, oldest first. */
  messages: ConversationMessage[];
  messageCount: number;
  path?: ActivePath;
  offPath?: ConversationMessage[];
}

/**
 * The active path's leaf: the path working memory names, or, in a document written before branches, the window's
 * newest turn (on the main line, where every ordinal up to the message count is on the path: one the window lacks
 * is only not stored yet). Undefined while nothing is committed, or when the window holds nothing to go on.
 */
export function activeLeaf(
  memory: Pick<PathState, 'messages' | 'path' | 'messageCount'>,
): PathLeaf | undefined {
  const { path, messages } = memory;
  if (path !== undefined) {
    const lastOrdinal =
      path.lastOrdinal ??
      messages.findLast((message) => message.chatMessageId === path.leafChatMessageId)?.ordinal;
    return lastOrdinal === undefined
      ? undefined
      : { chatMessageId: path.leafChatMessageId, branch: path.branch, lastOrdinal };
  }
  const newest = messages.findLast((message) => message.ordinal !== undefined);
  if (newest?.ordinal === undefined) return undefined;
  const before = messages.findLast(
    (message) => message.chatMessageId !== newest.chatMessageId && (message.ordinal ?? 0) < newest.ordinal!,
  );
  return {
    chatMessageId: newest.chatMessageId,
    branch: branchOf(newest, before?.chatMessageId ?? null),
    lastOrdinal: Math.max(newest.ordinal, memory.messageCount - 1),
  };
}

/** A path as working memory names it. */
export function pathOf(leaf: PathLeaf): ActivePath & { lastOrdinal: number } {
  return { leafChatMessageId: leaf.chatMessageId, branch: leaf.branch, lastOrdinal: leaf.lastOrdinal };
}

/**
 * The branch of a turn that continues `leaf` (undefined: the conversation has no turn yet) with its first message
 * at `firstOrdinal`. Unlike a bare continuation, it skips ordinals other branches took since the leaf.
 */
export function continuationFrom(leaf: PathLeaf | undefined, firstOrdinal: number): TurnBranch {
  if (leaf === undefined) return { parentChatMessageId: null, branchId: MAIN_BRANCH, gaps: [] };
  return {
    parentChatMessageId: leaf.chatMessageId,
    branchId: leaf.branch.branchId,
    gaps: gapsAfter(leaf.branch.gaps, leaf.lastOrdinal, firstOrdinal),
  };
}

export type PlacedTurn =
  | { kind: 'placed'; state: PathState & { path: ActivePath }; branch: TurnBranch }
  | { kind: 'unchanged' }
  /** The turn follows a turn that is no longer the active path's leaf: move there first (and place it again). */
  | { kind: 'parent-moved'; parentChatMessageId: string };

/**
 * A commit: the turn's messages not stored yet take the next ordinals and the turn's branch, and become the
 * active path's leaf. `decided` is the branch the turn took when it began; its gaps are computed again for the
 * ordinals the messages really get. A turn without a decided branch (or one begun on an empty conversation)
 * continues whatever the leaf is now. The window keeps the turn's path only: a fork from the conversation's start
 * moves the rest to the off-path messages.
 */
export function placeTurn(
  current: PathState,
  incoming: readonly ConversationMessage[],
  decided: TurnBranch | undefined,
  windowBytes: number,
): PlacedTurn {
  const offPath = current.offPath ?? [];
  const seen = new Set([...current.messages, ...offPath].map((message) => message.messageId));
  const fresh = incoming.filter(
    (message, index) =>
      !seen.has(message.messageId) &&
      incoming.findIndex((other) => other.messageId === message.messageId) === index,
  );
  if (fresh.length === 0) return { kind: 'unchanged' };
  const chatMessageId = fresh[0]!.chatMessageId;
  const firstOrdinal = current.messageCount;
  const leaf = activeLeaf(current);

  // A part of this turn is stored already (a failure kept the user's message): the rest joins it, on its branch.
  const earlier = [...current.messages, ...offPath].find(
    (message) => message.chatMessageId === chatMessageId,
  );
  let branch: TurnBranch;
  let kept = current.messages;
  let dropped: ConversationMessage[] = [];
  if (earlier !== undefined) {
    // Rare (a retried step after a failure was kept): the turn keeps the place its first part took.
    branch = earlier.branch ?? branchOf(earlier, leaf?.branch.parentChatMessageId ?? null);
  } else if (
    decided === undefined ||
    (decided.origin === undefined && decided.parentChatMessageId === null)
  ) {
    branch = continuationFrom(leaf, firstOrdinal);
  } else if (decided.parentChatMessageId === null) {
    // A fork of the conversation's first turn: nothing before it is on its path.
    branch = { ...decided, gaps: gapsAfter([], -1, firstOrdinal) };
    kept = [];
    dropped = current.messages;
  } else {
    if (leaf?.chatMessageId !== decided.parentChatMessageId)
      return { kind: 'parent-moved', parentChatMessageId: decided.parentChatMessageId };
    branch = { ...decided, gaps: gapsAfter(leaf.branch.gaps, leaf.lastOrdinal, firstOrdinal) };
  }
  // A commit holds one turn; should it hold several (a bulk load), each continues the one before it.
  let turnBranch = branch;
  let previous = chatMessageId;
  const added = fresh.map((message, index) => {
    if (message.chatMessageId !== previous) {
      turnBranch = { parentChatMessageId: previous, branchId: branch.branchId, gaps: branch.gaps };
      previous = message.chatMessageId;
    }
    return { ...message, ordinal: firstOrdinal + index, branch: turnBranch };
  });
  const last = added.at(-1)!;
  return {
    kind: 'placed',
    branch,
    state: {
      messages: fitHotWindow([...kept, ...added], windowBytes),
      messageCount: current.messageCount + added.length,
      path: { leafChatMessageId: last.chatMessageId, branch: last.branch, lastOrdinal: last.ordinal },
      offPath: dropped.length > 0 ? keepOffPath([...offPath, ...dropped], windowBytes) : offPath,
    },
  };
}

/**
 * A move of the active path to the one ending at `leaf`, whose newest messages (`window`, read by the caller)
 * become the window. What the old window held off the new path joins the off-path messages, except what long-term
 * history has already (ordinal below `storedBelow`).
 */
export function movePath(
  current: PathState,
  leaf: PathLeaf,
  window: ConversationMessage[],
  windowBytes: number,
  storedBelow = 0,
): PathState & { path: ActivePath } {
  const off = [...(current.offPath ?? []), ...current.messages].filter(
    (message) =>
      message.ordinal !== undefined &&
      message.ordinal >= storedBelow &&
      !onPath(message.ordinal, leaf.branch, leaf.lastOrdinal),
  );
  return {
    ...current,
    messages: window,
    path: pathOf(leaf),
    offPath: keepOffPath(off, windowBytes),
  };
}

/** The newest whole turns of off-path messages within the byte budget, each message once, in ordinal order. */
export function keepOffPath(
  messages: readonly ConversationMessage[],
  maxBytes: number,
): ConversationMessage[] {
  const unique = new Map(messages.map((message) => [message.messageId, message]));
  const sorted = [...unique.values()].sort((a, b) => (a.ordinal ?? 0) - (b.ordinal ?? 0));
  return sorted.length === 0 ? [] : fitHotWindow(sorted, maxBytes);
}

/** The committed messages of a turn held in working memory (the window, then the off-path ones), user first. */
export function turnMessagesIn(
  memory: Pick<PathState, 'messages' | 'offPath'>,
  chatMessageId: string,
): (ConversationMessage & { ordinal: number })[] {
  return [...memory.messages, ...(memory.offPath ?? [])]
    .filter(
      (message): message is ConversationMessage & { ordinal: number } =>
        message.chatMessageId === chatMessageId && message.ordinal !== undefined,
    )
    .sort((a, b) => a.ordinal - b.ordinal);
}

/**
 * A turn from its committed messages. An older turn (no branch) is on the main line and follows the turn whose
 * message has the ordinal just before its own: `previousChatMessageId` names it (null at the start).
 */
export function foundTurn(
  messages: readonly (ConversationMessage & { ordinal: number })[],
  previousChatMessageId: string | null,
): FoundTurn | undefined {
  const sorted = [...messages].sort((a, b) => a.ordinal - b.ordinal);
  const user = sorted.find((message) => message.role === 'user');
  if (user === undefined) return undefined;
  return {
    chatMessageId: user.chatMessageId,
    messages: sorted,
    firstOrdinal: sorted[0]!.ordinal,
    lastOrdinal: sorted.at(-1)!.ordinal,
    branch: branchOf(user, previousChatMessageId),
  };
}
