// Streaming to clients: GET /api/realtime/negotiate gives a Web PubSub client URL that follows one of the
// caller's sessions; GET /api/stream/{sessionId}/{chatMessageId} serves a turn's events as SSE, opened by
// identity or ticket.
import { z } from 'zod';
import {
  clientAccessSchema,
  negotiateQuerySchema,
  ownUserQuerySchema,
  streamParamsSchema,
  turnEventStreamSchema,
} from '../shared/streaming/contracts.js';
import { negotiateRealtime } from '../shared/streaming/negotiate-realtime.js';
import { openTurnStream } from '../shared/streaming/open-turn-stream.js';
import { redeemStreamTicket } from '../shared/streaming/stream-tickets.js';
import { SSE_HEADERS, parseLastEventId } from '../shared/streaming/sse.js';
import type { FunctionDefinition } from './definition.js';
import { endpoint, httpFunction } from './endpoint.js';

export const negotiateEndpoint = endpoint({
  name: 'negotiate',
  route: 'realtime/negotiate',
  methods: ['GET'],
  summary:
    "A Web PubSub client URL that follows one of the caller's sessions: it joins that session's group and no other, and cannot send.",
  auth: 'caller',
  responses: { 200: '{url, expiresAt}', 404: "an unknown session, or another user's" },
  replies: { 200: clientAccessSchema },
  query: negotiateQuerySchema,
  async handle({ app, caller, query }) {
    const services = { sessions: app.chat.sessions, clientAccess: app.streaming.clientAccess };
    return { status: 200, body: await negotiateRealtime(services, caller, query.sessionId) };
  },
});

export const streamTurnEndpoint = endpoint({
  name: 'streamTurn',
  route: 'stream/{sessionId}/{chatMessageId}',
  methods: ['GET'],
  summary:
    "A turn's events as SSE, from the start or after Last-Event-ID (header or lastEventId query); opened with " +
    "the caller's identity or the ticket of POST /api/chat's stream URL.",
  auth: 'caller-or-ticket',
  responses: {
    200: 'text/event-stream: `id:` the seq, `event:` the type, `data:` the event as JSON; a turn with no event after SSE_START_TIMEOUT_MS ends with `event: stream-closed` {reason, message}',
    204: "the client already has the ended turn's last event",
    401: 'no identity, or a ticket that is not valid for this turn',
    404: "an unknown turn, or another user's",
    429: 'STREAMS_PER_USER streams of the caller already open in this instance (limit, retry-after)',
  },
  replies: { 200: { content: { 'text/event-stream': turnEventStreamSchema } } },
  ticket: {
    queryParameter: 'ticket',
    redeem: ({ app, ticket, params }) =>
      redeemStreamTicket(app.streaming.tickets, ticket, params, new Date()),
  },
  params: streamParamsSchema,
  query: ownUserQuerySchema.extend({ lastEventId: z.string().optional(), ticket: z.string().optional() }),
  async handle({ app, caller, params, query, headers, context }) {
    const afterSeq = parseLastEventId(headers.get('last-event-id'), query.lastEventId ?? null);
    const stream = await openTurnStream(
      {
        sessions: app.chat.sessions,
        turnEvents: app.streaming.turnEvents,
        feed: app.streaming.feed,
        idleTimeoutMs: app.config.streaming.sseIdleTimeoutMs,
        startTimeoutMs: app.config.streaming.sseStartTimeoutMs,
        openStreams: app.streaming.openStreams,
      },
      caller,
      { ...params, afterSeq },
      (error) => context.warn(`SSE relay of ${params.chatMessageId}:`, error),
    );
    return stream === 'ended' ? { status: 204 } : { status: 200, headers: { ...SSE_HEADERS }, stream };
  },
});

export const streamFunctions: FunctionDefinition[] = [
  httpFunction(negotiateEndpoint),
  httpFunction(streamTurnEndpoint),
];
