// The Memory API: what long-term memory holds about the caller (the profile's facts with provenance and
// validity, and the conversation summaries without vectors), forgetting all of it, one fact or one
// conversation, and semantic search over the caller's past conversations.
import { z } from 'zod';
import { userIdSchema } from '../shared/ids.js';
import {
  conversationSearchBodySchema,
  conversationSearchResultsSchema,
  memoriesPageSchema,
} from '../shared/memory/contracts.js';
import {
  forgetMemories,
  forgetQuerySchema,
  getMemories,
  memoriesQuerySchema,
} from '../shared/memory/memory-api.js';
import { searchConversations } from '../shared/memory/search-conversations.js';
import { meteredSearch } from '../shared/usage/metered-search.js';
import type { FunctionDefinition } from './definition.js';
import { endpoint, httpFunction } from './endpoint.js';

const userParamsSchema = z.object({ userId: userIdSchema });

export const getMemoriesEndpoint = endpoint({
  name: 'getMemories',
  route: 'memory/users/{userId}/memories',
  methods: ['GET'],
  summary:
    "The caller's profile facts (every status, with provenance and validity; ?status=active for the current ones) and conversation summaries, newest first: ?limit, ?continuationToken.",
  auth: 'caller',
  responses: { 200: '{facts, summaries, continuationToken?}' },
  replies: { 200: memoriesPageSchema },
  params: userParamsSchema,
  query: memoriesQuerySchema,
  async handle({ app, caller, query }) {
    return { status: 200, body: await getMemories(app.memory, caller.userId, query) };
  },
});

export const deleteMemoriesEndpoint = endpoint({
  name: 'deleteMemories',
  route: 'memory/users/{userId}/memories',
  methods: ['DELETE'],
  summary:
    "Forgets the caller's long-term memory: everything; ?factId= one fact (404 if unknown); ?sessionId= one conversation's summary and the facts that came only from it.",
  auth: 'caller',
  responses: { 204: 'forgotten', 404: 'an unknown factId' },
  params: userParamsSchema,
  query: forgetQuerySchema,
  async handle({ app, caller, query, context }) {
    context.log('Forgot memories:', await forgetMemories(app.memory, caller.userId, query));
    return { status: 204 };
  },
});

export const searchConversationsEndpoint = endpoint({
  name: 'searchConversations',
  route: 'memory/users/{userId}/conversations/search',
  methods: ['POST'],
  summary:
    "Semantic search over the caller's past conversations {query, limit}: each result's summary, themes, sentiment, relevance score, sessionId, title and date.",
  auth: 'caller',
  responses: {
    200: '{results}',
    429: "the day's tokens or the month's cost spent, or QUOTA_SEARCHES_PER_MINUTE reached (limit, retry-after)",
  },
  replies: { 200: conversationSearchResultsSchema },
  params: userParamsSchema,
  body: { schema: conversationSearchBodySchema, maxBytes: 16 * 1024, what: 'search' },
  async handle({ app, caller, body, context }) {
    const results = await meteredSearch(app.quota, caller, context, () =>
      searchConversations(app.memory.search, caller.userId, body.query, body.limit),
    );
    return { status: 200, body: { results } satisfies z.input<typeof conversationSearchResultsSchema> };
  },
});

export const memoryApiFunctions: FunctionDefinition[] = [
  httpFunction(getMemoriesEndpoint),
  httpFunction(deleteMemoriesEndpoint),
  httpFunction(searchConversationsEndpoint),
];
