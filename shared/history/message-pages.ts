// One page of a conversation's messages along its path: the stored items merged with the committed messages the
// history worker has not stored yet, by ordinal, each ordinal once.
import { onPath } from '../conversation/branch-path.js';
import {
  fromStoredMessage,
  type ConversationHeader,
  type ConversationPath,
  type HistoryMessage,
} from './contracts.js';
import type { ConversationMessages } from './conversation-messages.js';
import type { MessageCursor } from './message-cursor.js';

export interface PageRequest {
  order: 'asc' | 'desc';
  limit: number;
  /** The previous page's last ordinal: asc continues above it, desc below it. */
  from?: number;
  /** The branch path to page along: nothing in its gaps, nothing after its leaf. */
  path?: ConversationPath;
}

/**
 * One page of the stored items merged with the unpersisted messages, by ordinal, each ordinal once (the stored
 * item wins: the worker may have stored a turn before the header says so). One item more than the page is read,
 * so a next page is announced only when there is one.
 */
export async function readPage(
  messages: ConversationMessages,
  header: ConversationHeader,
  pending: readonly HistoryMessage[],
  request: PageRequest,
): Promise<{ messages: HistoryMessage[]; next?: MessageCursor }> {
  const ascending = request.order === 'asc';
  const { path } = request;
  // Along the path: its gaps are skipped, and so is everything after its leaf (other branches' newer turns).
  const skip =
    path === undefined
      ? []
      : [...path.branch.gaps, { from: path.lastOrdinal + 1, to: Number.MAX_SAFE_INTEGER }];
  const stored = await messages.page(header.userId, header.sessionId, {
    order: request.order,
    limit: request.limit + 1,
    ...(request.from === undefined ? {} : ascending ? { after: request.from } : { before: request.from }),
    ...(skip.length === 0 ? {} : { skip }),
  });
  const inRange = (ordinal: number) =>
    (request.from === undefined || (ascending ? ordinal > request.from : ordinal < request.from)) &&
    (path === undefined || onPath(ordinal, path.branch, path.lastOrdinal));
  const byOrdinal = new Map<number, HistoryMessage>();
  for (const message of pending) if (inRange(message.ordinal)) byOrdinal.set(message.ordinal, message);
  for (const item of stored) byOrdinal.set(item.ordinal, fromStoredMessage(item));
  const merged = [...byOrdinal.values()].sort((a, b) =>
    ascending ? a.ordinal - b.ordinal : b.ordinal - a.ordinal,
  );
  const page = merged.slice(0, request.limit);
  const last = page.at(-1);
  return merged.length > request.limit && last !== undefined
    ? { messages: page, next: { ordinal: last.ordinal, order: request.order } }
    : { messages: page };
}
