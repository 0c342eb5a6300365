// Lists a user's conversations, newest activity first, a page at a time; with `q`, only those whose title or
// messages match its words.
import type { ConversationPage } from './contracts.js';
import { costField, toSummary, type HistoryReadServices } from './conversation-reads.js';
import type { ListConversationsQuery } from './history-queries.js';

/** Sessions whose messages match `q` that the list considers (beyond them, only titles match). */
const MAX_MATCHING_SESSIONS = 500;

export async function listConversations(
  services: Pick<HistoryReadServices, 'headers' | 'messages' | 'usage'>,
  userId: string,
  query: ListConversationsQuery,
): Promise<ConversationPage> {
  const match =
    query.q === undefined
      ? undefined
      : {
          q: query.q,
          sessionIds: await services.messages.sessionsMatching(userId, query.q, MAX_MATCHING_SESSIONS),
        };
  const page = await services.headers.list(userId, {
    limit: query.limit,
    ...(query.continuationToken === undefined ? {} : { continuationToken: query.continuationToken }),
    ...(match === undefined ? {} : { match }),
    ...(query.projectId === undefined ? {} : { projectId: query.projectId }),
  });
  // The page's costs in one query of their usage counters, whatever the history's length.
  const counters = services.usage
    ? await services.usage.conversations(
        userId,
        page.headers.map((header) => header.sessionId),
      )
    : undefined;
  const costs = new Map(counters?.map((counter) => [counter.key, counter]));
  return {
    conversations: page.headers.map((header) => ({
      ...toSummary(header),
      ...(counters ? costField(costs.get(header.sessionId)) : {}),
    })),
    ...(page.continuationToken === undefined ? {} : { continuationToken: page.continuationToken }),
  };
}
