// The chat front door: POST /api/session/start makes a session for the caller; POST /api/chat validates a
// message (an edit of an earlier one with `editOf`) and puts it on the `user-messages` queue, answering 202 once
// it is there with the URL of the turn's stream: a path on this API with a ticket, so a browser's native
// EventSource opens it without headers. POST .../{chatMessageId}/regenerate queues a new answer the same way, and
// POST .../{chatMessageId}/cancel stops a turn of the caller's.
import type { App } from '../shared/app/app.js';
import {
  chatBodyMaxBytes,
  chatRequestSchema,
  regenerateBodySchema,
  startSessionBodySchema,
  turnParamsSchema,
  type ChatAccepted,
} from '../shared/chat/contracts.js';
import { cancelTurn } from '../shared/chat/cancellation/cancel-turn.js';
import {
  postChatMessage,
  type PostChatMessageServices,
  type PostedChatMessage,
} from '../shared/chat/post-chat-message.js';
import { regenerateTurn } from '../shared/chat/regenerate-turn.js';
import { startSession } from '../shared/chat/start-session.js';
import type { FunctionDefinition } from './definition.js';
import { endpoint, httpFunction } from './endpoint.js';

export const startSessionEndpoint = endpoint({
  name: 'startSession',
  route: 'session/start',
  methods: ['POST'],
  summary: 'A new chat session owned by the caller (201).',
  auth: 'caller',
  body: { schema: startSessionBodySchema, maxBytes: 4 * 1024, optional: true, what: 'session request' },
  async handle({ app, caller }) {
    return { status: 201, body: await startSession(app.chat.sessions, caller) };
  },
});

export const postChatEndpoint = endpoint({
  name: 'postChat',
  route: 'chat',
  methods: ['POST'],
  summary: 'Queues a chat message for its session; 202 with the URL its events stream at.',
  auth: 'caller',
  body: {
    schema: (app) => chatRequestSchema(app.config.chat.maxTextChars),
    // Room for the longest text however JSON spells it: the character limit is the one a client meets.
    maxBytes: (app) => chatBodyMaxBytes(app.config.chat.maxTextChars),
    what: 'chat message',
  },
  async handle({ app, caller, body }) {
    return queued(await postChatMessage(frontDoor(app), caller, body));
  },
});

export const regenerateEndpoint = endpoint({
  name: 'regenerateTurn',
  route: 'chat/{sessionId}/{chatMessageId}/regenerate',
  methods: ['POST'],
  summary:
    'Queues a new answer {chatMessageId: <new id>} to an earlier message; the earlier answer stays as an alternative. 202 with the URL its events stream at.',
  auth: 'caller',
  params: turnParamsSchema,
  body: { schema: regenerateBodySchema, maxBytes: 4 * 1024, what: 'regenerate request' },
  async handle({ app, caller, params, body }) {
    return queued(await regenerateTurn(frontDoor(app), caller, params, body.chatMessageId));
  },
});

function frontDoor(app: App): PostChatMessageServices {
  return {
    sessions: app.chat.sessions,
    posted: app.chat.posted,
    publisher: app.chat.publisher,
    tickets: app.streaming.tickets,
    eraser: app.history.eraser,
    workingMemory: app.chat.turn.workingMemory,
    ticketTtlSeconds: app.config.streaming.ticketTtlSeconds,
  };
}

/** 202: the message is queued, and its events stream at a URL with a ticket (also the Location). */
function queued({ message, ticket }: PostedChatMessage) {
  const stream = `/api/stream/${message.sessionId}/${message.chatMessageId}?ticket=${ticket.ticket}`;
  const accepted: ChatAccepted = {
    sessionId: message.sessionId,
    chatMessageId: message.chatMessageId,
    status: 'queued',
    stream,
  };
  return { status: 202, headers: { location: stream }, body: accepted };
}

export const cancelTurnEndpoint = endpoint({
  name: 'cancelTurn',
  route: 'chat/{sessionId}/{chatMessageId}/cancel',
  methods: ['POST'],
  summary:
    "Stops the caller's turn: 202 while it is queued or running (its stream ends with message-end, finish reason " +
    'cancelled, and the text shown so far is the answer); 200 when it had already finished.',
  auth: 'caller',
  params: turnParamsSchema,
  async handle({ app, caller, params }) {
    const outcome = await cancelTurn(
      {
        sessions: app.chat.sessions,
        posted: app.chat.posted,
        events: app.streaming.turnEvents,
        cancellations: app.chat.cancellations,
      },
      caller,
      params,
    );
    return { status: outcome.status === 'cancelling' ? 202 : 200, body: outcome };
  },
});

export const chatFunctions: FunctionDefinition[] = [
  httpFunction(startSessionEndpoint),
  httpFunction(postChatEndpoint),
  httpFunction(regenerateEndpoint),
  httpFunction(cancelTurnEndpoint),
];
