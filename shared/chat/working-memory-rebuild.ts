// Working memory rebuilt from long-term history, on a hot miss or a move to another branch path: the newest stored
// messages of the path, read a page at a time from the end, fill the window beside the conversation's system
// prompt. What is read is bounded by the window, never by the conversation's length.
import { ForbiddenError, NotReadyError } from '../errors.js';
import { fromStoredMessage } from '../history/contracts.js';
import type { ConversationHeaders } from '../history/conversation-headers.js';
import type { ConversationMessages } from '../history/conversation-messages.js';
import { foundTurn, turnMessagesIn, type FoundTurn, type PathLeaf } from '../conversation/active-path.js';
import { onPath } from '../conversation/branch-path.js';
import { assistantMessageId, userMessageId } from '../conversation/turn-ids.js';
import type { ConversationMessage } from '../conversation/messages.js';
import type { OrdinalGap } from '../conversation/branches.js';
import { fitHotWindow, storedBytes } from '../conversation/hot-window.js';
import type { WorkingMemory } from '../conversation/working-memory-store.js';

/** Messages per page read from the end; a window of the default budget is usually one or two pages. */
export const REBUILD_PAGE_MESSAGES = 50;

/** The long-term side of working memory: what a rebuild reads. */
export interface LongTermHistory {
  headers: Pick<ConversationHeaders, 'get'>;
  messages: Pick<ConversationMessages, 'page' | 'getSystemPrompt' | 'get'>;
}

/**
 * The conversation's working memory as long-term history has it: the newest whole turns of its active path within
 * `windowBytes` (the same as fitHotWindow over all that path's messages), its message count, start date, path and
 * system prompt. A conversation without a header is new (nothing is read beyond the header); a header of another
 * user → ForbiddenError.
 */
export async function rebuildWorkingMemory(
  history: LongTermHistory,
  userId: string,
  sessionId: string,
  windowBytes: number,
  pageSize = REBUILD_PAGE_MESSAGES,
): Promise<WorkingMemory> {
  const header = await history.headers.get(userId, sessionId);
  // No header, so no digest either (the history worker folds only under a header, and marks each digest revision
  // in working memory before writing it): a round of this entry need not look for one.
  if (header === undefined) return { sessionId, userId, messages: [], messageCount: 0, digestRevision: 0 };
  if (header.userId !== userId) throw new ForbiddenError('This conversation belongs to another user.');
  // Beside the pages, not after them: the rebuild costs no extra round trip.
  const systemPrompt = history.messages.getSystemPrompt(userId, sessionId);
  // A header written before branches names no path: the whole conversation is its main line.
  const path = header.path;
  const pages = readNewestTurns(history, userId, sessionId, {
    anyStored: header.persistedCount > 0,
    ...(path === undefined ? {} : { before: path.lastOrdinal + 1 }),
    gaps: path?.branch.gaps ?? [],
    windowBytes,
    pageSize,
  });
  const [prompt, { read, newestOrdinal }] = await Promise.all([systemPrompt, pages]);
  return {
    sessionId,
    userId,
    messages: fitHotWindow(read, windowBytes),
    // The header counts what was committed, which the worker may not have stored yet.
    messageCount: Math.max(header.messageCount, newestOrdinal + 1),
    createdAt: header.createdAt,
    ...(prompt === undefined ? {} : { systemPrompt: prompt }),
    ...(path === undefined ? {} : { path }),
  };
}

/**
 * The window of the path that ends at `leaf`: its messages history has not stored yet (ordinal `storedBelow` and
 * up) from `known` (working memory's window and off-path messages), then its newest stored whole turns from
 * long-term history, along the path, until the window is full. NotReadyError when a message of the path is in
 * neither: the history worker has not stored it yet, and working memory no longer holds it.
 */
export async function readPathWindow(
  history: LongTermHistory,
  userId: string,
  sessionId: string,
  options: {
    leaf: PathLeaf;
    known: readonly ConversationMessage[];
    storedBelow: number;
    windowBytes: number;
    pageSize?: number;
  },
): Promise<ConversationMessage[]> {
  const { leaf, windowBytes } = options;
  const gaps = leaf.branch.gaps;
  const onLeafPath = (ordinal: number) => onPath(ordinal, leaf.branch, leaf.lastOrdinal);
  const byOrdinal = new Map<number, ConversationMessage>();
  for (const message of options.known)
    if (message.ordinal !== undefined && onLeafPath(message.ordinal)) byOrdinal.set(message.ordinal, message);
  const storedBelow = Math.min(options.storedBelow, leaf.lastOrdinal + 1);
  let missing = 0;
  for (let ordinal = storedBelow; ordinal <= leaf.lastOrdinal; ordinal += 1)
    if (onLeafPath(ordinal) && !byOrdinal.has(ordinal)) missing += 1;
  if (missing > 0)
    throw new NotReadyError(
      `${missing} message(s) of that branch are still being saved to the conversation's history: try again in a moment.`,
    );
  const pending = [...byOrdinal.values()].filter((message) => (message.ordinal ?? 0) >= storedBelow);
  // Below the messages taken from working memory, along the path (its gaps are each page's skip).
  const { read } = await readNewestTurns(history, userId, sessionId, {
    anyStored: storedBelow > 0,
    before: storedBelow,
    gaps,
    windowBytes: Math.max(0, windowBytes - storedBytes(pending)),
    pageSize: options.pageSize ?? REBUILD_PAGE_MESSAGES,
  });
  const merged = new Map<string, ConversationMessage>();
  for (const message of [...read, ...pending]) merged.set(message.messageId, message);
  const sorted = [...merged.values()].sort((a, b) => (a.ordinal ?? 0) - (b.ordinal ?? 0));
  return fitHotWindow(sorted, windowBytes);
}

/**
 * A committed turn: from working memory when it holds it, else from long-term history (its two messages by id,
 * in parallel). A turn of the main line from before branches follows the turn just before it: one more look (in
 * working memory, else one single-message page) names it.
 */
export async function findCommittedTurn(
  history: LongTermHistory,
  memory: WorkingMemory,
  chatMessageId: string,
): Promise<FoundTurn | undefined> {
  const { userId, sessionId } = memory;
  let messages = turnMessagesIn(memory, chatMessageId);
  if (!messages.some((message) => message.role === 'user')) {
    const read = await Promise.all([
      history.messages.get(userId, sessionId, userMessageId(chatMessageId)),
      history.messages.get(userId, sessionId, assistantMessageId(chatMessageId)),
    ]);
    messages = read.filter((item) => item !== undefined).map(fromStoredMessage);
  }
  const user = messages.find((message) => message.role === 'user');
  if (user === undefined) return undefined;
  if (user.branch !== undefined) return foundTurn(messages, user.branch.parentChatMessageId);
  return foundTurn(messages, await previousTurnId(history, memory, user.ordinal));
}

/** The turn whose message has the ordinal just before `ordinal` (main line, before branches); null at the start. */
async function previousTurnId(
  history: LongTermHistory,
  memory: WorkingMemory,
  ordinal: number,
): Promise<string | null> {
  if (ordinal === 0) return null;
  const inMemory = [...memory.messages, ...(memory.offPath ?? [])].find(
    (message) => message.ordinal === ordinal - 1,
  );
  if (inMemory !== undefined) return inMemory.chatMessageId;
  const [previous] = await history.messages.page(memory.userId, memory.sessionId, {
    order: 'desc',
    before: ordinal,
    limit: 1,
  });
  return previous?.chatMessageId ?? null;
}

/**
 * The newest stored whole turns (ordinal below `before`, from the end when absent; outside `gaps`) that fill the
 * window, oldest first, and the newest ordinal read (-1: none).
 */
async function readNewestTurns(
  history: LongTermHistory,
  userId: string,
  sessionId: string,
  options: {
    /** False while the history worker has stored nothing: there is nothing to page through (it may lag the commit). */
    anyStored: boolean;
    before?: number;
    gaps: readonly OrdinalGap[];
    windowBytes: number;
    pageSize: number;
  },
): Promise<{ read: ConversationMessage[]; newestOrdinal: number }> {
  const { gaps, windowBytes, pageSize } = options;
  const newestFirst: ConversationMessage[] = [];
  let atStart = !options.anyStored || options.before === 0;
  let before = options.before;
  while (!atStart) {
    const page = await history.messages.page(userId, sessionId, {
      order: 'desc',
      limit: pageSize,
      ...(before === undefined ? {} : { before }),
      ...(gaps.length === 0 ? {} : { skip: gaps }),
    });
    newestFirst.push(...page.map(fromStoredMessage));
    const oldest = page.at(-1)?.ordinal ?? 0;
    atStart = page.length < pageSize || oldest === 0;
    // Full once the whole turns read (all but the oldest, which a page boundary may have cut) exceed the window.
    if (atStart || storedBytes(withoutOldestTurn(newestFirst)) > windowBytes) break;
    before = oldest;
  }

  const read = (atStart ? newestFirst : withoutOldestTurn(newestFirst)).reverse();
  return { read, newestOrdinal: newestFirst[0]?.ordinal ?? -1 };
}

function withoutOldestTurn(newestFirst: readonly ConversationMessage[]): ConversationMessage[] {
  const oldest = newestFirst.at(-1)?.chatMessageId;
  return newestFirst.filter((message) => message.chatMessageId !== oldest);
}
