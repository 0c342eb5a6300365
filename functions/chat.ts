// The chat front door: start a session, post a message (or an edit) onto the `user-messages` queue with the
// URL of its stream, regenerate an answer, stop a turn; and the job that ends a temporary chat after its time.
import {
  chatAcceptedSchema,
  chatBodyMaxBytes,
  chatRequestSchema,
  regenerateBodySchema,
  startSessionBodySchema,
  turnCancellingSchema,
  turnFinishedSchema,
  turnParamsSchema,
  type ChatAccepted,
} from '../shared/chat/contracts/http.js';
import { cancelTurn } from '../shared/chat/cancellation/cancel-turn.js';
import {
  postChatMessage,
  type PostChatMessageServices,
  type PostedChatMessage,
} from '../shared/chat/post-chat-message.js';
import { regenerateTurn } from '../shared/chat/regenerate-turn.js';
import { startSession } from '../shared/chat/start-session.js';
import { expireTemporaryChat, scheduleTemporaryChatExpiry } from '../shared/chat/temporary-chat-expiry.js';
import { temporaryChatExpiryOrchestrator } from '../shared/chat/temporary-chat-orchestration.js';
import {
  EXPIRE_TEMPORARY_CHAT_ACTIVITY,
  TEMPORARY_CHAT_EXPIRY_ORCHESTRATION,
  temporaryChatExpiryInputSchema,
} from '../shared/chat/contracts/activities.js';
import type { InvocationContext } from '@azure/functions';
import { getApp, type App } from '../shared/app/app.js';
import { parseInput } from '../shared/validation.js';
import { sessionStarter } from '../shared/app/conversation-shaping.js';
import { chatSessionSchema } from '../shared/conversation/session-store.js';
import type { FunctionDefinition } from './definition.js';
import { endpoint, httpFunction } from './endpoint.js';

export const startSessionEndpoint = endpoint({
  name: 'startSession',
  route: 'session/start',
  methods: ['POST'],
  summary:
    'A new chat session owned by the caller (201), shaped by {model?, memory?, assistantId?, projectId?, temporary?}.',
  auth: 'caller',
  responses: {
    201: 'the session: {sessionId, userId, createdAt, model, memory?, assistant?, projectId?, temporary?}',
    403: 'a model, assistant or project the caller may not use (named)',
    404: "an unknown assistant or project, or another user's",
  },
  replies: { 201: chatSessionSchema },
  body: { schema: startSessionBodySchema, maxBytes: 4 * 1024, optional: true, what: 'session request' },
  usesDurableClient: true,
  async handle({ app, caller, body, context }) {
    const session = await startSession(sessionStarter(app), caller, body ?? {});
    // A temporary chat's job, which deletes it once TEMPORARY_CHAT_TTL has passed.
    await scheduleTemporaryChatExpiry(
      app.orchestrations(context),
      session,
      app.config.chat.temporaryChatTtlSeconds,
    );
    return { status: 201, body: session };
  },
});

export const postChatEndpoint = endpoint({
  name: 'postChat',
  route: 'chat',
  methods: ['POST'],
  summary: 'Queues a chat message for its session; 202 with the URL its events stream at.',
  auth: 'caller',
  responses: {
    202: 'queued: {sessionId, chatMessageId, status, stream}, the stream URL also in Location; the same id and text again answers the same turn',
    404: "the session (or the message `editOf` names) is unknown, another user's, or deleted",
    409: 'the chatMessageId was posted with another text, or `editOf` names a turn not answered yet (with retry-after)',
    429: 'a quota refuses a new message (limit, allowed, current; retry-after): nothing was recorded or queued',
  },
  replies: { 202: chatAcceptedSchema },
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
  responses: {
    202: 'queued, as for POST /api/chat',
    404: "an unknown turn, or another user's",
    409: 'the turn is not answered yet (with retry-after), or the new chatMessageId is taken',
    429: 'a quota refuses a new answer, as for POST /api/chat',
  },
  replies: { 202: chatAcceptedSchema },
  params: turnParamsSchema,
  body: { schema: regenerateBodySchema, maxBytes: 4 * 1024, what: 'regenerate request' },
  async handle({ app, caller, params, body }) {
    return queued(await regenerateTurn(frontDoor(app), caller, params, body.chatMessageId, body.model));
  },
});

/** What a new message or answer needs at the front door, quotas included (POST /api/ui/chat uses it too). */
export function frontDoor(app: App): PostChatMessageServices {
  return {
    sessions: app.chat.sessions,
    posted: app.chat.posted,
    publisher: app.chat.publisher,
    workingMemory: app.chat.turn.workingMemory,
    ticketTtlSeconds: app.config.streaming.ticketTtlSeconds,
    quota: app.quota,
    attachments: app.attachments,
    models: app.config.models,
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
  responses: {
    200: 'the turn had already ended: {status: "finished", finishReason}',
    202: 'stopping: {status: "cancelling"}',
    404: "an unknown turn, or another user's",
  },
  replies: { 200: turnFinishedSchema, 202: turnCancellingSchema },
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
  {
    kind: 'orchestration',
    name: TEMPORARY_CHAT_EXPIRY_ORCHESTRATION,
    handler: temporaryChatExpiryOrchestrator,
  },
  {
    kind: 'activity',
    name: EXPIRE_TEMPORARY_CHAT_ACTIVITY,
    usesDurableClient: true,
    async handler(value: unknown, context: InvocationContext) {
      const input = parseInput(temporaryChatExpiryInputSchema, value, 'temporary chat expiry');
      const app = await getApp();
      const outcome = await expireTemporaryChat(
        {
          ...app.history,
          memory: app.memory,
          orchestrations: app.orchestrations(context),
          stops: app.chat.cancellations,
        },
        input,
      );
      context.log(`Temporary chat ${input.sessionId} expired: ${outcome}.`);
      return outcome;
    },
  },
];
