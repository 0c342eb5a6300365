// The streaming area's contracts: the event vocabulary of a chat turn (DESIGN §5), one for Web PubSub and SSE,
// the document each stored event is, and what negotiate and the stream endpoint answer. Every event carries the
// session, the turn (chatMessageId) and a per-turn sequence number that starts at 1 and has no gaps, so a client
// can de-duplicate, detect a gap and resume. A turn's stream ends with `message-end` or `error`.
import { z } from 'zod';
import { chatMessageIdSchema, sessionIdSchema } from '../chat/contracts.js';
import type { ContainerSpec } from '../cosmos/container-spec.js';
import { llmUsageSchema } from '../llm/llm-gateway.js';

/** Web PubSub hub the chat events are sent through. */
export const WEB_PUBSUB_HUB = 'chat';

export const TURN_EVENTS_CONTAINER = 'turn-events';

export const streamingContainers: readonly ContainerSpec[] = [
  {
    id: TURN_EVENTS_CONTAINER,
    partitionKeyPaths: ['/sessionId'],
    defaultTtlSeconds: 24 * 60 * 60,
    purpose:
      'The streamed events of each turn, one document per event, so a client that joins late or reconnects gets the whole response; expires after 24 h.',
  },
];

// --- Events -----------------------------------------------------------------------------------------------

const eventBodies = {
  'message-start': { userMessageId: z.string(), assistantMessageId: z.string() },
  'reasoning-delta': { delta: z.string() },
  'reasoning-end': {},
  content: { delta: z.string() },
  'tool-call': { round: z.number().int(), toolCallId: z.string(), name: z.string(), arguments: z.string() },
  'tool-result': {
    round: z.number().int(),
    toolCallId: z.string(),
    name: z.string(),
    result: z.string(),
    isError: z.boolean(),
  },
  'message-end': { finishReason: z.string(), usage: llmUsageSchema.optional() },
  error: { code: z.string(), message: z.string() },
} as const;

export type ChatEventType = keyof typeof eventBodies;

export const CHAT_EVENT_TYPES = Object.keys(eventBodies) as readonly ChatEventType[];

const eventBase = {
  sessionId: z.string(),
  chatMessageId: z.string(),
  /** 1 for `message-start`, then one more per event of the turn. */
  seq: z.number().int().min(1),
};

function body<T extends ChatEventType>(type: T) {
  return z.object({ type: z.literal(type), ...eventBodies[type] });
}

function event<T extends ChatEventType>(type: T) {
  return body(type).extend(eventBase);
}

/** An event's own fields, before the turn's ids and sequence number are stamped on it. */
export const chatEventBodySchema = z.discriminatedUnion('type', [
  body('message-start'),
  body('reasoning-delta'),
  body('reasoning-end'),
  body('content'),
  body('tool-call'),
  body('tool-result'),
  body('message-end'),
  body('error'),
]);
export type ChatEventBody = z.infer<typeof chatEventBodySchema>;

/** An event as stored, sent to Web PubSub and framed as SSE. */
export const chatEventSchema = z.discriminatedUnion('type', [
  event('message-start'),
  event('reasoning-delta'),
  event('reasoning-end'),
  event('content'),
  event('tool-call'),
  event('tool-result'),
  event('message-end'),
  event('error'),
]);
export type ChatEvent = z.infer<typeof chatEventSchema>;

/** The last event of a turn's stream. */
export function isTerminalEvent(event: { type: ChatEventType }): boolean {
  return event.type === 'message-end' || event.type === 'error';
}

// --- Stored documents -------------------------------------------------------------------------------------

/** One event in the `turn-events` container; the id is derived from the turn and seq, so a rewrite is an upsert. */
export const turnEventDocumentSchema = z.object({
  id: z.string(),
  sessionId: z.string(),
  chatMessageId: z.string(),
  seq: z.number().int().min(1),
  event: chatEventSchema,
});
export type TurnEventDocument = z.infer<typeof turnEventDocumentSchema>;

// --- HTTP -------------------------------------------------------------------------------------------------

/** GET /api/realtime/negotiate: a Web PubSub client URL that receives the caller's own events. */
export const clientAccessSchema = z.object({ url: z.string(), expiresAt: z.iso.datetime() });
export type ClientAccess = z.infer<typeof clientAccessSchema>;

/** GET /api/stream/{sessionId}/{chatMessageId}. */
export const streamParamsSchema = z.object({
  sessionId: sessionIdSchema,
  chatMessageId: chatMessageIdSchema,
});

/** `userId` may be named in the query (seed 000's clients do); it must be the caller's. */
export const ownUserQuerySchema = z.object({ userId: z.string().max(128).optional() });

// --- Live delivery ----------------------------------------------------------------------------------------

/** GET /api/realtime/negotiate?sessionId=...: the client URL follows one of the caller's own sessions. */
export const negotiateQuerySchema = ownUserQuerySchema.extend({ sessionId: sessionIdSchema });

/**
 * The Web PubSub group of a session's live events: every connection that follows the session is in it, so a
 * turn's events reach those connections only (not the user's other tabs on other sessions).
 */
export function sessionGroup(sessionId: string): string {
  return `session-${sessionId}`;
}
