// Conversation search, the one use-case behind the tool search_conversation_history, POST .../conversations/search
// and the MCP search tool: the query is embedded, the user's summaries ranked (hybrid: vector and full text), and
// each hit named by its conversation's title from history.
import type { LlmGateway } from '../llm/llm-gateway.js';
import type { Relevance } from '../search/relevance.js';
import type { ConversationSearchHit } from './contracts.js';
import type { ConversationSummaries } from './conversation-summaries.js';
import type { MemoryScope } from '../conversation/memory-scope.js';
import { genAiSpanName, retrievalAttributes } from '../telemetry/gen-ai.js';
import { SpanKind, withSpan } from '../telemetry/spans.js';

/**
 * Where a conversation's title is read. A port, so memory needs nothing of history: the composition root passes
 * history's conversation headers.
 */
export interface ConversationTitles {
  get(userId: string, sessionId: string): Promise<{ title?: string } | undefined>;
}

export interface ConversationSearchServices {
  summaries: Pick<ConversationSummaries, 'search'>;
  headers: ConversationTitles;
  llm: Pick<LlmGateway, 'embed'>;
  /** What earns a conversation its place in the results (SEARCH_* settings, the embedding model's threshold). */
  relevance: Relevance;
}

/**
 * The user's past conversations that best match `query`, best first, at most `limit`. `excludeSessionId` leaves
 * one conversation out (the one being had: the model already sees it).
 */
export function searchConversations(
  services: ConversationSearchServices,
  userId: string,
  query: string,
  limit: number,
  options: { excludeSessionId?: string; scopes?: readonly MemoryScope[] | undefined } = {},
): Promise<ConversationSearchHit[]> {
  return withSpan(
    genAiSpanName('retrieval', CONVERSATION_SUMMARIES),
    {
      kind: SpanKind.CLIENT,
      attributes: retrievalAttributes({ dataSource: CONVERSATION_SUMMARIES, topK: limit }),
    },
    async (span) => {
      const hits = await rankConversations(services, userId, query, limit, options);
      span.setAttribute('chat.retrieval.results', hits.length);
      return hits;
    },
  );
}

/** The data source conversation search reads, as its retrieval spans name it. */
const CONVERSATION_SUMMARIES = 'conversation-summaries';

async function rankConversations(
  services: ConversationSearchServices,
  userId: string,
  query: string,
  limit: number,
  options: { excludeSessionId?: string; scopes?: readonly MemoryScope[] | undefined },
): Promise<ConversationSearchHit[]> {
  const [vector] = await services.llm.embed([query]);
  if (vector === undefined) throw new Error('The embedding model returned no vector for the search query.');
  const excluded = options.excludeSessionId;
  // One more than asked when one is left out, so leaving it out still fills the list.
  const matches = await services.summaries.search(userId, {
    text: query,
    vector,
    limit: excluded === undefined ? limit : limit + 1,
    relevance: services.relevance,
    ...(options.scopes === undefined ? {} : { scopes: options.scopes }),
  });
  const kept = matches.filter((match) => match.summary.sessionId !== excluded).slice(0, limit);
  const headers = await Promise.all(
    kept.map((match) => services.headers.get(userId, match.summary.sessionId)),
  );
  return kept.map((match, i) => {
    const title = headers[i]?.title;
    return {
      ...match.summary,
      ...(title === undefined ? {} : { title }),
      date: match.summary.timestamp,
      score: match.score,
      similarity: match.similarity,
    };
  });
}
