// The History API: a user's conversations, one conversation along its active branch, switching branch,
// renaming, exporting and deleting it, rating an answer, and the user's totals.
import { z } from 'zod';
import { chatMessageIdSchema, sessionIdSchema, userIdSchema } from '../shared/ids.js';
import {
  branchBodySchema,
  conversationExportSchema,
  conversationPageSchema,
  conversationSummarySchema,
  conversationWithMessagesSchema,
  feedbackBodySchema,
  feedbackReplySchema,
  historyStatsSchema,
  titleBodySchema,
} from '../shared/history/contracts.js';
import { deleteConversation } from '../shared/history/delete-conversation.js';
import { exportConversation } from '../shared/history/export-conversation.js';
import { getConversation } from '../shared/history/get-conversation.js';
import {
  exportQuerySchema,
  getConversationQuerySchema,
  listConversationsQuerySchema,
  switchBranchQuerySchema,
} from '../shared/history/history-queries.js';
import { historyStats } from '../shared/history/history-stats.js';
import { listConversations } from '../shared/history/list-conversations.js';
import { rateAnswer } from '../shared/history/rate-answer.js';
import { renameConversation } from '../shared/history/rename-conversation.js';
import { switchBranch } from '../shared/history/switch-branch.js';
import type { FunctionDefinition } from './definition.js';
import { endpoint, httpFunction } from './endpoint.js';

const userParamsSchema = z.object({ userId: userIdSchema });
const sessionParamsSchema = z.object({ sessionId: sessionIdSchema });

export const listConversationsEndpoint = endpoint({
  name: 'listConversations',
  route: 'history/users/{userId}/conversations',
  methods: ['GET'],
  summary:
    "The caller's conversations, newest activity first: ?limit, ?continuationToken, and ?q to match words of titles and messages.",
  auth: 'caller',
  responses: { 200: '{conversations, continuationToken?}' },
  replies: { 200: conversationPageSchema },
  params: userParamsSchema,
  query: listConversationsQuerySchema,
  async handle({ app, caller, query }) {
    return { status: 200, body: await listConversations(app.history, caller.userId, query) };
  },
});

export const getConversationEndpoint = endpoint({
  name: 'getConversation',
  route: 'history/conversations/{sessionId}',
  methods: ['GET'],
  summary:
    'One conversation with its messages (tool calls and results included), a page at a time: ?limit, ?continuationToken, ?order=asc|desc.',
  auth: 'caller',
  responses: {
    200: '{systemPrompt, path, messages, continuationToken?, ...the summary}',
    404: "an unknown conversation, or another user's",
  },
  replies: { 200: conversationWithMessagesSchema },
  params: sessionParamsSchema,
  query: getConversationQuerySchema,
  async handle({ app, caller, params, query }) {
    return { status: 200, body: await getConversation(app.history, caller.userId, params.sessionId, query) };
  },
});

export const switchBranchEndpoint = endpoint({
  name: 'switchBranch',
  route: 'history/conversations/{sessionId}/branch',
  methods: ['PUT'],
  summary:
    "Shows {chatMessageId}'s branch (as last continued) and continues there from now on; answers its first page as GET does (?limit, ?order).",
  auth: 'caller',
  responses: {
    200: 'the conversation, as GET answers it, on the new branch',
    404: "an unknown conversation or turn, or another user's",
    409: 'a message of that branch is not stored yet (with retry-after)',
  },
  replies: { 200: conversationWithMessagesSchema },
  params: sessionParamsSchema,
  query: switchBranchQuerySchema,
  body: { schema: branchBodySchema, maxBytes: 4 * 1024, what: 'branch' },
  async handle({ app, caller, params, query, body }) {
    return {
      status: 200,
      body: await switchBranch(
        { ...app.history, posted: app.chat.posted },
        caller.userId,
        params.sessionId,
        body.chatMessageId,
        query,
      ),
    };
  },
});

export const renameConversationEndpoint = endpoint({
  name: 'renameConversation',
  route: 'history/conversations/{sessionId}/title',
  methods: ['PUT'],
  summary: "Sets the conversation's title {title}; a title the user set is never replaced by the model's.",
  auth: 'caller',
  responses: { 200: "the conversation's summary", 404: "an unknown conversation, or another user's" },
  replies: { 200: conversationSummarySchema },
  params: sessionParamsSchema,
  body: { schema: titleBodySchema, maxBytes: 4 * 1024, what: 'title' },
  async handle({ app, caller, params, body }) {
    return {
      status: 200,
      body: await renameConversation(app.history.headers, caller.userId, params.sessionId, body.title),
    };
  },
});

export const rateAnswerEndpoint = endpoint({
  name: 'rateAnswer',
  route: 'history/conversations/{sessionId}/turns/{chatMessageId}/feedback',
  methods: ['PUT'],
  summary:
    "Rates the turn's answer {rating: 'up' | 'down'}, or takes the rating back {rating: null}; history returns it as the message's `feedback`.",
  auth: 'caller',
  responses: {
    200: '{chatMessageId, feedback: {rating, at} | null}',
    400: 'a rating other than up, down or null, or a turn with no answer',
    404: "an unknown conversation or turn, or another user's",
    409: 'the answer is being stored (with retry-after)',
  },
  replies: { 200: feedbackReplySchema },
  params: sessionParamsSchema.extend({ chatMessageId: chatMessageIdSchema }),
  body: { schema: feedbackBodySchema, maxBytes: 1024, what: 'feedback' },
  async handle({ app, caller, params, body }) {
    return {
      status: 200,
      body: await rateAnswer(
        app.history,
        caller.userId,
        params.sessionId,
        params.chatMessageId,
        body.rating,
        new Date(),
      ),
    };
  },
});

export const deleteConversationEndpoint = endpoint({
  name: 'deleteConversation',
  route: 'history/conversations/{sessionId}',
  methods: ['DELETE'],
  summary:
    'Deletes the conversation everywhere it lives (history, hot store, turn events, turns, its summary and the memories only it taught); a later POST /api/chat to it → 404.',
  auth: 'caller',
  responses: { 204: 'deleted', 404: "an unknown or already deleted conversation, or another user's" },
  usesDurableClient: true,
  params: sessionParamsSchema,
  async handle({ app, caller, params, context }) {
    const deleted = await deleteConversation(
      {
        ...app.history,
        memory: app.memory,
        orchestrations: app.orchestrations(context),
        stops: app.chat.cancellations,
      },
      caller.userId,
      params.sessionId,
    );
    context.log(`Deleted conversation ${params.sessionId}:`, deleted);
    return { status: 204 };
  },
});

export const exportConversationEndpoint = endpoint({
  name: 'exportConversation',
  route: 'history/conversations/{sessionId}/export',
  methods: ['GET'],
  summary: 'The whole conversation as a file: ?format=markdown (the default) or json.',
  auth: 'caller',
  responses: {
    200: 'an attachment: text/markdown or application/json',
    404: "an unknown conversation, or another user's",
  },
  replies: {
    200: {
      content: {
        'text/markdown': z.string().describe('the conversation as Markdown (?format=markdown)'),
        'application/json': conversationExportSchema,
      },
    },
  },
  params: sessionParamsSchema,
  query: exportQuerySchema,
  async handle({ app, caller, params, query }) {
    const file = await exportConversation(app.history, caller.userId, params.sessionId, query.format);
    return {
      status: 200,
      text: file.text,
      headers: {
        'content-type': file.contentType,
        'content-disposition': `attachment; filename="${file.fileName}"`,
      },
    };
  },
});

export const historyStatsEndpoint = endpoint({
  name: 'historyStats',
  route: 'history/users/{userId}/stats',
  methods: ['GET'],
  summary: "The caller's totals: conversations, messages and tokens used.",
  auth: 'caller',
  responses: { 200: '{userId, conversations, messages, tokens: {prompt, completion, total}}' },
  replies: { 200: historyStatsSchema },
  params: userParamsSchema,
  async handle({ app, caller }) {
    return { status: 200, body: await historyStats(app.history.headers, caller.userId, app.usage.ledger) };
  },
});

export const historyApiFunctions: FunctionDefinition[] = [
  httpFunction(listConversationsEndpoint),
  httpFunction(getConversationEndpoint),
  httpFunction(switchBranchEndpoint),
  httpFunction(renameConversationEndpoint),
  httpFunction(rateAnswerEndpoint),
  httpFunction(deleteConversationEndpoint),
  httpFunction(exportConversationEndpoint),
  httpFunction(historyStatsEndpoint),
];
