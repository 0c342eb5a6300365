// The tool search_conversation_history: semantic search over the user's earlier conversations (their
// summaries in long-term memory), leaving out the conversation being had, which the model already sees.
import { z } from 'zod';

import {
  DEFAULT_SEARCH_LIMIT,
  SEARCH_CONVERSATION_HISTORY_TOOL,
  searchLimitSchema,
  searchQuerySchema,
  type ConversationSearchHit,
} from '../memory/contracts.js';
import { defineTool, type ToolDefinition } from './tool-registry.js';
import type { MemoryScope } from '../conversation/memory-scope.js';

export interface ConversationSearchDeps {
  /** The memory area's search use-case (shared/memory/search-conversations.ts), bound to its services. */
  searchConversations: (
    userId: string,
    query: string,
    limit: number,
    options: { excludeSessionId?: string; scopes?: readonly MemoryScope[] },
  ) => Promise<ConversationSearchHit[]>;
}

/** A hit as the model reads it: what to cite, what it was about, and how well it matched. */
interface FoundConversation {
  sessionId: string;
  /** Absent when the conversation has no title (its history header is gone). */
  title?: string;
  date: string;
  summary: string;
  themes: string[];
  persons: string[];
  places: string[];
  user_sentiment: string;
  /** Higher is better; comparable within one result only. */
  relevance_score: number;
}

export function conversationSearchTool(deps: ConversationSearchDeps): ToolDefinition {
  return defineTool({
    name: SEARCH_CONVERSATION_HISTORY_TOOL,
    description:
      "Searches the user's earlier conversations (not this one) by meaning and returns the best matches, each " +
      "with its sessionId, title, date, summary, themes, the user's sentiment and a relevance score. Use it when " +
      'the user refers to something from a past conversation ("last time", "we talked about", "remember when", ' +
      '"as I told you") or when earlier context would help; name the conversation (its title and date) when ' +
      'you use what it found.',
    memory: true,
    // The contract's limit defaults to 5, which a JSON schema would list as required: here it is optional.
    arguments: z.object({
      search_query: searchQuerySchema.describe(
        'What to look for, in a few words or a sentence (for example "vacation planning in Portugal").',
      ),
      limit: searchLimitSchema
        .optional()
        .describe(`How many conversations to return (1-20; ${DEFAULT_SEARCH_LIMIT} when not given).`),
    }),
    async run({ search_query, limit }, { userId, sessionId, memoryScopes }) {
      const hits = await deps.searchConversations(userId, search_query, limit ?? DEFAULT_SEARCH_LIMIT, {
        excludeSessionId: sessionId,
        // Only the conversations whose memory the turn reads: its project's, its assistant's own, the user's.
        ...(memoryScopes === undefined ? {} : { scopes: memoryScopes }),
      });
      return {
        search_query,
        conversations: hits.map(foundConversation),
        ...(hits.length === 0 ? { note: 'No earlier conversation of this user matches the search.' } : {}),
      };
    },
  });
}

function foundConversation(hit: ConversationSearchHit): FoundConversation {
  return {
    sessionId: hit.sessionId,
    ...(hit.title === undefined ? {} : { title: hit.title }),
    date: hit.date,
    summary: hit.summary,
    themes: hit.themes,
    persons: hit.persons,
    places: hit.places,
    user_sentiment: hit.user_sentiment,
    // RRF scores are small fractions: four significant digits say the order without noise.
    relevance_score: Number(hit.score.toPrecision(4)),
  };
}
