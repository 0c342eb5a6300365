// Working memory rebuilt from long-term history on a hot miss (a conversation resumed after its hot copy expired):
// the header gives the message count and start date, and the newest stored messages, read a page at a time from
// the end, fill the window; the conversation's system prompt is read beside them (one point read), so the resumed
// conversation sends the prompt it began with. What is read is bounded by the window, never by its length.
import { ForbiddenError } from '../errors.js';
import { fromStoredMessage } from '../history/contracts.js';
import type { ConversationHeaders } from '../history/conversation-headers.js';
import type { ConversationMessages } from '../history/conversation-messages.js';
import type { ConversationMessage } from './contracts.js';
import { fitHotWindow, storedBytes } from './hot-window.js';
import type { WorkingMemory } from './working-memory-store.js';

/** Messages per page read from the end; a window of the default budget is usually one or two pages. */
export const REBUILD_PAGE_MESSAGES = 50;

/** The long-term side of working memory: what a rebuild reads. */
export interface LongTermHistory {
  headers: Pick<ConversationHeaders, 'get'>;
  messages: Pick<ConversationMessages, 'page' | 'getSystemPrompt'>;
}

/**
 * The conversation's working memory as long-term history has it: its newest whole turns within `windowBytes`
 * (the same as fitHotWindow over all its messages), its message count, start date and system prompt. A
 * conversation without a header is new (nothing is read beyond the header); a header of another user →
 * ForbiddenError.
 */
export async function rebuildWorkingMemory(
  history: LongTermHistory,
  userId: string,
  sessionId: string,
  windowBytes: number,
  pageSize = REBUILD_PAGE_MESSAGES,
): Promise<WorkingMemory> {
  const header = await history.headers.get(userId, sessionId);
  if (header === undefined) return { sessionId, userId, messages: [], messageCount: 0 };
  if (header.userId !== userId) throw new ForbiddenError('This conversation belongs to another user.');
  // Beside the pages, not after them: the rebuild costs no extra round trip.
  const systemPrompt = history.messages.getSystemPrompt(userId, sessionId);
  const pages = readNewestTurns(history, userId, sessionId, header.persistedCount, windowBytes, pageSize);
  const [prompt, { read, newestOrdinal }] = await Promise.all([systemPrompt, pages]);
  return {
    sessionId,
    userId,
    messages: fitHotWindow(read, windowBytes),
    // The header counts what was committed, which the worker may not have stored yet.
    messageCount: Math.max(header.messageCount, newestOrdinal + 1),
    createdAt: header.createdAt,
    ...(prompt === undefined ? {} : { systemPrompt: prompt }),
  };
}

/** The newest stored whole turns that fill the window, oldest first, and the newest ordinal read (-1: none). */
async function readNewestTurns(
  history: LongTermHistory,
  userId: string,
  sessionId: string,
  persistedCount: number,
  windowBytes: number,
  pageSize: number,
): Promise<{ read: ConversationMessage[]; newestOrdinal: number }> {
  // Until the history worker stored a message there is nothing to page through (it may lag the commit).
  const newestFirst: ConversationMessage[] = [];
  let atStart = persistedCount === 0;
  let before: number | undefined;
  while (!atStart) {
    const page = await history.messages.page(userId, sessionId, {
      order: 'desc',
      limit: pageSize,
      ...(before === undefined ? {} : { before }),
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
