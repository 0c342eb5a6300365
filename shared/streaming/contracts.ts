// The streaming area's contracts: the event vocabulary of a chat turn, one for Web PubSub and SSE, the
// document each stored event is, and what negotiate and the stream endpoint answer.
import { z } from 'zod';
import { chatMessageIdSchema, sessionIdSchema } from '../ids.js';
import type { ContainerSpec } from '../cosmos/container-spec.js';
import { knowledgeSourceSchema } from '../conversation/sources.js';
import { llmUsageSchema } from '../llm/llm-gateway.js';
import { llmCostSchema } from '../usage/contracts.js';

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

/** A tool's MCP server needs the user to connect their account (OAuth): the page shows a Connect button for it. */
export const toolConnectNeedSchema = z.object({ serverId: z.string(), serverName: z.string() });
export type ToolConnectNeed = z.infer<typeof toolConnectNeedSchema>;

// --- Events -----------------------------------------------------------------------------------------------

const eventBodies = {
  'message-start': { userMessageId: z.string(), assistantMessageId: z.string() },
  'reasoning-delta': { delta: z.string() },
  'reasoning-end': {},
  content: { delta: z.string() },
  'tool-call': { round: z.number().int(), toolCallId: z.string(), name: z.string(), arguments: z.string() },
  /** A tool call that waits for its user's yes (POST .../approvals/{approvalId}); the stream goes on once answered. */
  'tool-approval-request': {
    round: z.number().int(),
    approvalId: z.string(),
    toolCallId: z.string(),
    toolName: z.string(),
    input: z.string(),
  },
  'tool-result': {
    round: z.number().int(),
    toolCallId: z.string(),
    name: z.string(),
    result: z.string(),
    isError: z.boolean(),
    /** The call needed its user's yes and did not get it (denied, timed out): it did not run. */
    denied: z.literal(true).optional(),
    /** The call was not run: its MCP server needs the user to connect first. */
    connect: toolConnectNeedSchema.optional(),
  },
  /**
   * The turn's knowledge-base sources so far (deduplicated, in the order its tools found them), sent at the start
   * of the model round that follows a tool round whose searches added to them: before the answer's text that cites
   * them. Each is the whole list, which the next one replaces; the answer's stored message keeps the last.
   */
  sources: { sources: z.array(knowledgeSourceSchema) },
  /**
   * The `content`, `reasoning-delta`, `reasoning-end` and `tool-call` events with fromSeq ≤ seq ≤ toSeq came from
   * an attempt at a model round that did not finish (its process crashed, or the model's stream broke): a client
   * drops what they showed. The round is then streamed anew, so the text that remains is the committed answer.
   */
  discard: { fromSeq: z.number().int().min(1), toSeq: z.number().int().min(1) },
  /** `cost`: the turn's usage at the LLM_PRICES table's prices. */
  'message-end': {
    finishReason: z.string(),
    usage: llmUsageSchema.optional(),
    cost: llmCostSchema.optional(),
  },
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
  body('tool-approval-request'),
  body('tool-result'),
  body('sources'),
  body('discard'),
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
  event('tool-approval-request'),
  event('tool-result'),
  event('sources'),
  event('discard'),
  event('message-end'),
  event('error'),
]);
export type ChatEvent = z.infer<typeof chatEventSchema>;

/** The last event of a turn's stream. */
export function isTerminalEvent(event: { type: ChatEventType }): boolean {
  return event.type === 'message-end' || event.type === 'error';
}

// --- Stored documents -------------------------------------------------------------------------------------

/**
 * One stored batch of a turn's events (the events one flush delivered, contiguous seqs) in the `turn-events`
 * container. Its id is derived from the turn and the batch's first seq, and it is created, never replaced: a
 * retried write of the same batch finds it, and a different batch can never take seqs that are already stored.
 */
export const turnEventBatchDocumentSchema = z.object({
  id: z.string(),
  sessionId: z.string(),
  chatMessageId: z.string(),
  firstSeq: z.number().int().min(1),
  lastSeq: z.number().int().min(1),
  events: z.array(chatEventSchema).min(1),
});
export type TurnEventBatchDocument = z.infer<typeof turnEventBatchDocumentSchema>;

// --- HTTP -------------------------------------------------------------------------------------------------

/** GET /api/realtime/negotiate: a Web PubSub client URL that receives the caller's own events. */
export const clientAccessSchema = z.object({ url: z.string(), expiresAt: z.iso.datetime() });

/** GET /api/stream/{sessionId}/{chatMessageId}'s 200 body, as its media type text/event-stream carries it. */
export const turnEventStreamSchema = z
  .string()
  .describe(
    "Server-sent events, one per chat event of the turn in order: `id:` its seq, `event:` its type, `data:` the event as JSON (sessionId, chatMessageId, seq, type and the type's fields). The stream ends after the turn's message-end or error event.",
  );
export type ClientAccess = z.infer<typeof clientAccessSchema>;

/** GET /api/stream/{sessionId}/{chatMessageId}. */
export const streamParamsSchema = z.object({
  sessionId: sessionIdSchema,
  chatMessageId: chatMessageIdSchema,
});

/** `userId` may be named in the query (some clients name it); it must be the caller's. */
export const ownUserQuerySchema = z.object({ userId: z.string().max(128).optional() });

// --- Stream tickets ---------------------------------------------------------------------------------------
// A browser's native EventSource sends no headers, so POST /api/chat's 202 gives a stream URL with a ticket: a
// bearer value for one turn of one user, short-lived. Only its SHA-256 is stored, with the record of the message
// the front door accepted (in the user's partition, removed with it when the conversation is deleted).

/** The `ticket` query parameter of a stream URL: the user id in base64url, a dot, 32 random bytes in base64url. */
export const STREAM_TICKET_PATTERN = /^([A-Za-z0-9_-]{1,180})\.[A-Za-z0-9_-]{43}$/;

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
