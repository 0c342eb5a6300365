// Sharing by link: the owner snapshots a conversation (POST .../shares), lists and revokes their links; anyone with
// a link reads the snapshot, signed in or not; a signed-in reader continues it as a conversation of their own.
import { z } from 'zod';
import { sessionIdSchema, userIdSchema } from '../shared/ids.js';
import {
  copiedShareSchema,
  createdShareSchema,
  createShareBodySchema,
  shareListSchema,
  shareParamsSchema,
  sharedConversationSchema,
} from '../shared/sharing/contracts.js';
import { copyShare } from '../shared/sharing/copy-share.js';
import { createShare, type SharingServices } from '../shared/sharing/create-share.js';
import { readShare } from '../shared/sharing/read-share.js';
import { listShares, revokeShare } from '../shared/sharing/share-links.js';
import type { App } from '../shared/app/app.js';
import type { FunctionDefinition } from './definition.js';
import { endpoint, httpFunction } from './endpoint.js';

/** Shares are never kept by a cache and never indexed: a revoked link must stop working at once. */
const SHARE_HEADERS = { 'x-robots-tag': 'noindex, nofollow', 'cache-control': 'no-store' } as const;

const OFF = 'sharing is turned off on this service (SHARING=off)';

function sharing(app: App): SharingServices {
  return {
    shares: app.sharing.shares,
    history: {
      headers: app.history.headers,
      messages: app.history.messages,
      workingMemory: app.history.workingMemory,
    },
    sessions: app.chat.sessions,
    config: app.config.sharing,
  };
}

export const createShareEndpoint = endpoint({
  name: 'createShare',
  route: 'history/conversations/{sessionId}/shares',
  methods: ['POST'],
  summary:
    "Shares a snapshot of the conversation's shown branch by link {upToMessageId?, expiresAt?, includeToolCalls?}: its messages' text, times and cited sources, never the system prompt, memory, other branches or (unless included) tool calls.",
  auth: 'caller',
  responses: {
    201: '{shareId, url, messageCount, expiresAt}',
    403: OFF,
    404: "an unknown conversation, or another user's",
    413: 'the snapshot would pass 4 MiB: share up to an earlier message',
  },
  replies: { 201: createdShareSchema },
  params: z.object({ sessionId: sessionIdSchema }),
  body: { schema: createShareBodySchema, maxBytes: 4 * 1024, optional: true, what: 'share' },
  async handle({ app, caller, params, body, url }) {
    const share = await createShare(
      sharing(app),
      caller.userId,
      params.sessionId,
      body ?? { includeToolCalls: false },
      url,
    );
    return { status: 201, body: share, headers: { 'cache-control': 'no-store' } };
  },
});

export const listSharesEndpoint = endpoint({
  name: 'listShares',
  route: 'history/users/{userId}/shares',
  methods: ['GET'],
  summary:
    "The caller's share links that still work, newest first: each with its url, conversation, title and dates.",
  auth: 'caller',
  responses: { 200: '{shares: [{shareId, url, sessionId, title, createdAt, expiresAt}]}', 403: OFF },
  replies: { 200: shareListSchema },
  params: z.object({ userId: userIdSchema }),
  async handle({ app, caller, url }) {
    return { status: 200, body: { shares: await listShares(sharing(app), caller.userId, url) } };
  },
});

export const readShareEndpoint = endpoint({
  name: 'readShare',
  route: 'shares/{shareId}',
  methods: ['GET'],
  summary:
    'A shared conversation, for anyone with the link (no sign-in): its title, dates and messages; marked noindex.',
  auth: 'anonymous',
  responses: {
    200: '{shareId, title, createdAt, expiresAt, includesToolCalls, messages}',
    403: OFF,
    404: 'an unknown, revoked or expired share (one answer for all three)',
  },
  replies: { 200: sharedConversationSchema },
  params: shareParamsSchema,
  async handle({ app, params }) {
    return { status: 200, body: await readShare(sharing(app), params.shareId), headers: SHARE_HEADERS };
  },
});

export const revokeShareEndpoint = endpoint({
  name: 'revokeShare',
  route: 'shares/{shareId}',
  methods: ['DELETE'],
  summary: "Revokes one of the caller's share links: from now on it answers 404.",
  auth: 'caller',
  responses: { 204: 'revoked', 403: OFF, 404: "an unknown share, or another user's (the same answer)" },
  params: shareParamsSchema,
  async handle({ app, caller, params }) {
    await revokeShare(sharing(app), caller.userId, params.shareId);
    return { status: 204 };
  },
});

export const copyShareEndpoint = endpoint({
  name: 'copyShare',
  route: 'shares/{shareId}/copy',
  methods: ['POST'],
  summary:
    "Continue this conversation: the shared messages become a new conversation of the caller's, which the next POST /api/chat to it continues.",
  auth: 'caller',
  responses: {
    201: '{sessionId, title, messageCount}',
    403: OFF,
    404: 'an unknown, revoked or expired share',
  },
  replies: { 201: copiedShareSchema },
  params: shareParamsSchema,
  async handle({ app, caller, params }) {
    const copied = await copyShare(
      {
        ...sharing(app),
        newSessions: app.chat.sessions,
        headers: app.history.headers,
        messages: app.history.messages,
      },
      caller.userId,
      params.shareId,
    );
    return { status: 201, body: copied };
  },
});

export const shareFunctions: FunctionDefinition[] = [
  httpFunction(createShareEndpoint),
  httpFunction(listSharesEndpoint),
  httpFunction(readShareEndpoint),
  httpFunction(revokeShareEndpoint),
  httpFunction(copyShareEndpoint),
];
