// The Memory API: what long-term memory holds about the caller (the profile's facts with provenance and
// validity, and the conversation summaries without vectors), forgetting all of it, one fact or one
// conversation, and semantic search over the caller's past conversations.
import { z } from 'zod';
import { factIdSchema, userIdSchema } from '../shared/ids.js';
import { memoryScopeAccess } from '../shared/app/workspace.js';
import { moveFact, moveFactBodySchema, scopeFilterSchema, scopesOf } from '../shared/memory/memory-scopes.js';
import {
  conversationSearchBodySchema,
  conversationSearchResultsSchema,
  memoriesPageSchema,
  profileFactViewSchema,
} from '../shared/memory/contracts.js';
import {
  forgetMemories,
  forgetQuerySchema,
  getMemories,
  memoriesQuerySchema,
  toFactView,
} from '../shared/memory/memory-api.js';
import { searchConversations } from '../shared/memory/search-conversations.js';
import { meteredSearch } from '../shared/usage/metered-search.js';
import type { FunctionDefinition } from './definition.js';
import { endpoint, httpFunction } from './endpoint.js';

const userParamsSchema = z.object({ userId: userIdSchema });
const factParamsSchema = z.object({ userId: userIdSchema, factId: factIdSchema });

export const getMemoriesEndpoint = endpoint({
  name: 'getMemories',
  route: 'memory/users/{userId}/memories',
  methods: ['GET'],
  summary:
    "The caller's profile facts (every status, with scope, provenance and validity; ?status=active for the current ones) and conversation summaries, newest first: ?limit, ?continuationToken; ?scope=user|assistant:<id>|project:<id> for one scope's memory.",
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

export const moveFactEndpoint = endpoint({
  name: 'moveFact',
  route: 'memory/users/{userId}/memories/{factId}',
  methods: ['PATCH'],
  summary:
    "Moves one of the caller's facts to another scope {scope: 'user' | 'assistant:<assistantId>' | 'project:<projectId>'}: the user's shared memory, an assistant's own or a project's (one of the caller's own projects, an assistant they may use); its provenance and validity stay.",
  auth: 'caller',
  responses: {
    200: 'the fact, in its new scope',
    404: "an unknown factId, or a scope that is not the caller's",
  },
  replies: { 200: profileFactViewSchema },
  params: factParamsSchema,
  body: { schema: moveFactBodySchema, maxBytes: 1024, what: 'fact move' },
  async handle({ app, caller, params, body }) {
    const moved = await moveFact(
      { facts: app.memory.facts, access: memoryScopeAccess(app.workspace) },
      caller,
      params.factId,
      body.scope,
    );
    return { status: 200, body: toFactView(moved) };
  },
});

export const searchConversationsEndpoint = endpoint({
  name: 'searchConversations',
  route: 'memory/users/{userId}/conversations/search',
  methods: ['POST'],
  summary:
    "Semantic search over the caller's past conversations {query, limit} (?scope= for one scope's): each result's summary, themes, sentiment, relevance score, sessionId, title and date.",
  auth: 'caller',
  responses: {
    200: '{results}',
    429: "the day's tokens or the month's cost spent, or QUOTA_SEARCHES_PER_MINUTE reached (limit, retry-after)",
  },
  replies: { 200: conversationSearchResultsSchema },
  params: userParamsSchema,
  query: z.object({ scope: scopeFilterSchema }),
  body: { schema: conversationSearchBodySchema, maxBytes: 16 * 1024, what: 'search' },
  async handle({ app, caller, query, body, context }) {
    const results = await meteredSearch(app.quota, caller, context, () =>
      searchConversations(app.memory.search, caller.userId, body.query, body.limit, {
        scopes: scopesOf(query.scope),
      }),
    );
    return { status: 200, body: { results } satisfies z.input<typeof conversationSearchResultsSchema> };
  },
});

export const memoryApiFunctions: FunctionDefinition[] = [
  httpFunction(getMemoriesEndpoint),
  httpFunction(deleteMemoriesEndpoint),
  httpFunction(moveFactEndpoint),
  httpFunction(searchConversationsEndpoint),
];
