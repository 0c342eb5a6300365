// Reads one conversation a page at a time along its active path (each turn at a branch point with its
// alternatives), read-your-writes; the first page in either order carries its system prompt.
import { ValidationError } from '../errors.js';
import type { ConversationWithMessages } from './contracts.js';
import {
  pendingMemory,
  requireHeader,
  shownPath,
  systemPromptOf,
  toSummary,
  costField,
  unpersistedMessages,
  type HistoryReadServices,
} from './conversation-reads.js';
import type { GetConversationQuery } from './history-queries.js';
import { encodeMessageCursor } from './message-cursor.js';
import { readPage } from './message-pages.js';
import { withAlternatives } from './turn-alternatives.js';

export async function getConversation(
  services: HistoryReadServices,
  userId: string,
  sessionId: string,
  query: GetConversationQuery,
): Promise<ConversationWithMessages> {
  const header = await requireHeader(services.headers, userId, sessionId);
  const cursor = query.continuationToken;
  if (cursor !== undefined && cursor.order !== query.order)
    throw new ValidationError(
      `Invalid query: continuationToken continues a page in order '${cursor.order}': ask with order=${cursor.order}.`,
      [{ path: 'continuationToken', message: `continues a page in order '${cursor.order}'` }],
    );
  const memory = pendingMemory(services.workingMemory, header);
  // The prompt heads the conversation: the first page (either order) carries it; the next pages need not.
  const [loaded, systemPrompt, usage] = await Promise.all([
    memory,
    cursor === undefined ? systemPromptOf(services.messages, header, memory) : undefined,
    services.usage?.counter(userId, 'conversation', sessionId),
  ]);
  const path = shownPath(header, loaded);
  const page = await readPage(services.messages, header, unpersistedMessages(loaded, header), {
    order: query.order,
    limit: query.limit,
    ...(cursor === undefined ? {} : { from: cursor.ordinal }),
    ...(path === undefined ? {} : { path }),
  });
  const messages = await withAlternatives(services.messages, header, loaded, page.messages);
  return {
    ...toSummary(header),
    ...(services.usage ? costField(usage) : {}),
    ...(systemPrompt === undefined ? {} : { systemPrompt }),
    ...(path === undefined
      ? {}
      : { path: { leafChatMessageId: path.leafChatMessageId, branchId: path.branch.branchId } }),
    messages,
    ...(page.next === undefined ? {} : { continuationToken: encodeMessageCursor(page.next) }),
  };
}
