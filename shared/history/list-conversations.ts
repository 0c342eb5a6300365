// Lists a user's conversations, newest activity first, a page at a time; with `q`, only those whose title or
// messages match its words.
import type { ConversationPage } from './contracts.js';
import { toSummary, type HistoryReadServices } from './conversation-reads.js';
import type { ListConversationsQuery } from './history-queries.js';

/** Sessions whose messages match `q` that the list considers (beyond them, only titles match). */
const MAX_MATCHING_SESSIONS = 500;

export async function listConversations(
  services: Pick<HistoryReadServices, 'headers' | 'messages'>,
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
  });
  return {
    conversations: page.headers.map(toSummary),
    ...(page.continuationToken === undefined ? {} : { continuationToken: page.continuationToken }),
  };
}
