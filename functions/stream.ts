// GET /api/stream/{sessionId}/{chatMessageId}: a turn's events as Server-Sent Events, from the start or after
// Last-Event-ID, whether the turn is still running or long finished.
import type { HttpRequest, HttpResponseInit, InvocationContext } from '@azure/functions';
import { z } from 'zod';
import { parseInput } from '../shared/chat/chat-message.js';
import { chatMessageIdSchema, sessionIdSchema } from '../shared/chat/ids.js';
import { requireSession } from '../shared/chat/post-chat-message.js';
import { getDependencies } from '../shared/dependencies.js';
import { toProblemResponse } from '../shared/http/problem.js';
import { assertOwnUser } from '../shared/identity/caller.js';
import { SSE_HEADERS, parseLastEventId } from '../shared/streaming/sse.js';
import { relayTurnEvents, resumePoint } from '../shared/streaming/turn-event-relay.js';
import type { FunctionDefinition } from './definition.js';

const streamParams = z.object({ sessionId: sessionIdSchema, chatMessageId: chatMessageIdSchema });

export async function streamTurn(
  request: HttpRequest,
  context: InvocationContext,
): Promise<HttpResponseInit> {
  try {
    const { config, identity, sessions, turnEvents, eventFeed } = await getDependencies();
    const caller = await identity.resolve(request.headers);
    assertOwnUser(caller, request.query.get('userId'));
    const { sessionId, chatMessageId } = parseInput(streamParams, request.params, 'stream path');
    const afterSeq = parseLastEventId(request.headers.get('last-event-id'), request.query.get('lastEventId'));
    await requireSession(sessions, caller, sessionId);
    if ((await resumePoint(turnEvents, { sessionId, chatMessageId }, afterSeq)) === 'ended')
      return { status: 204, headers: { 'cache-control': 'no-store' } };
    const body = relayTurnEvents({
      userId: caller.userId,
      sessionId,
      chatMessageId,
      afterSeq,
      store: turnEvents,
      feed: eventFeed,
      idleTimeoutMs: config.streaming.sseIdleTimeoutMs,
      onError: (error) => context.warn(`SSE relay of ${chatMessageId}:`, error),
    });
    return { status: 200, headers: { ...SSE_HEADERS }, body };
  } catch (error) {
    return toProblemResponse(error, context, request.url);
  }
}

export const streamFunctions: FunctionDefinition[] = [
  {
    kind: 'http',
    name: 'streamTurn',
    route: 'stream/{sessionId}/{chatMessageId}',
    methods: ['GET'],
    handler: streamTurn,
  },
];
