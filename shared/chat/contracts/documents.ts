// Chat's stored documents: the sessions container (sessions, their tombstones, posted-message records) and the
// hot container (working memory, turn records, tool results, cancellations), with the containers' specs.
import { messageAttachmentSchema } from '../../message-attachments.js';
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import type { ContainerSpec } from '../../cosmos/container-spec.js';
import { userIdSchema } from '../../ids.js';
import { llmUsageSchema, toolCallSchema } from '../../llm/llm-gateway.js';
import { activePathSchema, turnBranchSchema } from '../../conversation/branches.js';
import { conversationMessageSchema, systemPromptSchema, turnRefSchema } from '../../conversation/messages.js';
import { postedMessageSchema } from '../../conversation/posted-message-store.js';
import { chatSessionSchema } from '../../conversation/session-store.js';
import { knowledgeSourceSchema } from '../../conversation/sources.js';
import { toolConnectNeedSchema } from '../../streaming/contracts.js';
import { clientToolsSchema, turnContextSchema } from './queue.js';

/** A new session's id: made by the server (chat message ids are made by the client). */
export function newSessionId(): string {
  return randomUUID();
}

export const SESSIONS_CONTAINER = 'sessions';
export const HOT_CONVERSATIONS_CONTAINER = 'hot-conversations';

/**
 * How long a deleted conversation's session document stays as its tombstone. Longer than any message of the
 * conversation can still be delivered: a `message-completed` event waits at most its subscription's 7 days, and is
 * then delivered at most 10 times under a lock renewed for up to 30 minutes each (7 days 5 hours in all; the
 * `user-messages` queue never expires its messages, but its worker starts no turn for a session that is gone).
 * session-tombstone.test.ts checks the figure against the entities' settings and host.json.
 */
export const SESSION_TOMBSTONE_TTL_SECONDS = 8 * 24 * 60 * 60;

/**
 * How long a temporary chat lives by default (TEMPORARY_CHAT_TTL): as long as its working memory in the hot store,
 * the only place its messages are kept (it has no header, so history keeps nothing of it).
 */
export const TEMPORARY_CHAT_TTL_SECONDS = 24 * 60 * 60;

/**
 * A temporary chat's session outlives its expiry job by this much (at most its own time to live again): the job
 * finds the session to mark, and the session's ttl still ends it if the job never ran.
 */
export function temporarySessionTtlSeconds(ttlSeconds: number): number {
  return ttlSeconds + Math.min(ttlSeconds, 60 * 60);
}

/** 24 h, the hot store's time to live (the hot cache keeps active conversations for a day). */
export const HOT_STORE_TTL_SECONDS = 24 * 60 * 60;

export const chatContainers: readonly ContainerSpec[] = [
  {
    id: SESSIONS_CONTAINER,
    partitionKeyPaths: ['/userId'],
    // Only a deleted conversation's tombstone sets a `ttl`: sessions and posted records never expire.
    defaultTtlSeconds: -1,
    purpose:
      "Chat sessions, one document per session, owned by a user; a deleted conversation's stays as its tombstone for 8 days.",
  },
  {
    id: HOT_CONVERSATIONS_CONTAINER,
    partitionKeyPaths: ['/sessionId'],
    defaultTtlSeconds: HOT_STORE_TTL_SECONDS,
    // Read by id, listed by an id prefix within a session (the id is always indexed), swept by user when an account
    // is erased: the window of messages a turn rewrites is never queried, so indexing its every property would only
    // make each commit dearer.
    indexedPaths: ['/sessionId', '/userId', '/ownerId'],
    purpose:
      'Working memory of active conversations (the hot store) and the state of their running turns; expires 24 h after the last write.',
  },
];

export const sessionDocumentSchema = chatSessionSchema.extend({
  id: z.string(),
  /** Set when DELETE of its conversation began: from then on the session is not found (the delete resumes). */
  deletingAt: z.iso.datetime().optional(),
  /**
   * Set when that DELETE finished: the document stays as the conversation's tombstone, which every writer of the
   * conversation reads, until its own `ttl` (SESSION_TOMBSTONE_TTL_SECONDS) expires.
   */
  deletedAt: z.iso.datetime().optional(),
  ttl: z.number().int().positive().optional(),
});
export type SessionDocument = z.infer<typeof sessionDocumentSchema>;

/**
 * Who holds a client-chosen session id, in the `sessions` container under a partition of its own (`~session.` and
 * the id: no user id starts with `~`), created once and never deleted, so an id is held by one user for good.
 */
export const SESSION_CLAIM_DOCUMENT_ID = 'session-claim';

export function sessionClaimPartitionKey(sessionId: string): string {
  return `~session.${sessionId}`;
}

export const sessionClaimDocumentSchema = z.object({
  id: z.literal(SESSION_CLAIM_DOCUMENT_ID),
  /** The partition key (`sessionClaimPartitionKey`), not a user. */
  userId: z.string(),
  kind: z.literal('session-claim'),
  sessionId: z.string(),
  owner: userIdSchema,
  claimedAt: z.iso.datetime(),
});
export type SessionClaimDocument = z.infer<typeof sessionClaimDocumentSchema>;

/** Working memory: one document per session in the hot container (id = sessionId). */
export const hotConversationDocumentSchema = z.object({
  id: z.string(),
  sessionId: z.string(),
  userId: userIdSchema,
  /** Oldest first. */
  messages: z.array(conversationMessageSchema),
  createdAt: z.string(),
  lastActivity: z.string(),
  /** Messages the conversation has had in all (the next ordinal); the window holds only the newest. */
  messageCount: z.number().int().nonnegative().optional(),
  /**
   * The system prompt as the conversation's first turn sent it (personalised from the profile, or the basic one):
   * the conversation's first message, kept apart from the window so trimming never drops it.
   */
  systemPrompt: systemPromptSchema.optional(),
  /**
   * The path the conversation is on (its window holds only that path's messages); absent until a turn with a
   * branch committed: then the window's newest turn on the main branch.
   */
  path: activePathSchema.optional(),
  /**
   * Messages of other branches that left the window when the path moved (an edit, a regenerate, a switch), newest
   * last, within the window's byte budget: the history worker may not have stored them yet, and a switch back or
   * the History API takes them from here meanwhile. Absent until the path first moved.
   */
  offPath: z.array(conversationMessageSchema).optional(),
  /**
   * The turns of the conversation its owner stopped lately (their chatMessageIds, newest last, a bounded list), marked
   * here beside their stop records so a model round reads them with working memory instead of apart.
   */
  stopped: z.array(z.string()).optional(),
  /** When the conversation's delete began (its tombstone's time), marked here beside the tombstone for the same reason. */
  deletingAt: z.string().optional(),
  /**
   * Set once the stops recorded before the entry was made were marked in it: from then on a stop is marked as it is
   * recorded, and the marks can be read instead of the records. Absent (a new entry, or one older than the marks).
   */
  marksComplete: z.literal(true).optional(),
  /**
   * The document holding the window's older messages (workingMemoryBaseDocumentSchema): the window is its messages
   * from `skip` on, then `messages` (those since it was written). Absent: `messages` is the whole window.
   */
  base: z
    .object({
      id: z.string(),
      /** Messages the base holds. */
      count: z.number().int().nonnegative(),
      /** Its first messages that have left the window since. */
      skip: z.number().int().nonnegative(),
      createdAt: z.iso.datetime(),
    })
    .optional(),
  /**
   * The newest revision of the conversation's digest the history worker began to write (marked before it writes the
   * digest): a round whose process holds that revision's digest uses it without reading it; 0 in an entry made for a
   * conversation with no header yet, so no digest (nothing to read). Absent in an entry made again after it expired,
   * or older than the mark: the round reads the digest.
   */
  digestRevision: z.number().int().nonnegative().optional(),
});
export type HotConversationDocument = z.infer<typeof hotConversationDocumentSchema>;

/** The id of a working memory base in the hot container, in its session's partition. */
export function workingMemoryBaseDocumentId(suffix: string): string {
  return `wm-base.${suffix}`;
}

/**
 * The older messages of a conversation's window, written once and never changed (so any process may keep a copy),
 * named by the working memory document; kept longer than the hot store's TTL, so it outlives every document naming it.
 */
export const workingMemoryBaseDocumentSchema = z.object({
  id: z.string(),
  sessionId: z.string(),
  userId: userIdSchema,
  kind: z.literal('working-memory-base'),
  /** Oldest first. */
  messages: z.array(conversationMessageSchema),
  createdAt: z.iso.datetime(),
});
export type WorkingMemoryBaseDocument = z.infer<typeof workingMemoryBaseDocumentSchema>;

/** One LLM call of a turn, as the turn record keeps it once the call asked for tools. */
export const roundRecordSchema = z.object({
  round: z.number().int().nonnegative(),
  content: z.string(),
  reasoning: z.string(),
  /** How long the model reasoned in this call (ms), when it streamed reasoning. */
  reasoningMs: z.number().int().nonnegative().optional(),
  toolCalls: z.array(toolCallSchema),
  finishReason: z.string(),
  usage: llmUsageSchema.optional(),
  /** seq the next activity starts from. */
  nextSeq: z.number().int().positive(),
});
export type RoundRecord = z.infer<typeof roundRecordSchema>;

/**
 * The working-memory messages a turn's prompt holds, first and last by messageId: a reference, never a copy, so
 * the turn record stays small however long the conversation is.
 */
export const historyRangeSchema = z.object({ fromMessageId: z.string(), toMessageId: z.string() });
export type HistoryRange = z.infer<typeof historyRangeSchema>;

/**
 * The state of a turn whose model asked for tools, beside the session's working memory in the hot container.
 * A turn answered in its first round never needs one.
 */
export const turnRecordSchema = turnRefSchema.extend({
  userText: z.string(),
  /** The files the user's message carries. */
  attachments: z.array(messageAttachmentSchema).optional(),
  postedAt: z.string(),
  /** The history the prompt was built from; null when the conversation had none. */
  history: historyRangeSchema.nullable(),
  rounds: z.array(roundRecordSchema),
  /** A new conversation's system prompt, as its first round rendered it: later rounds send the same. */
  systemPrompt: systemPromptSchema.optional(),
  /** False: the turn was posted with use_memory false. Absent means true. */
  useMemory: z.boolean().optional(),
  /** The documents the conversation's assistant and project name: its knowledge search reads only these. */
  documentIds: z.array(z.string()).optional(),
  /** The built-in tools the conversation's assistant names: the only ones the turn offers. Absent: all. */
  tools: z.array(z.string()).optional(),
  /** The turn's place in the conversation's tree, decided when the turn began. */
  branch: turnBranchSchema.optional(),
  /** The messages its client gave before the user's (the OpenAI-compatible API): every round's history. */
  context: turnContextSchema.optional(),
  /** What followed the user's message in that context (client tool calls and their results). */
  followUp: turnContextSchema.optional(),
  /** The client's own tools, offered in every round; a call of one ends the turn after its round. */
  clientTools: clientToolsSchema.optional(),
});
export type TurnRecord = z.infer<typeof turnRecordSchema>;

export const turnDocumentSchema = turnRecordSchema.extend({ id: z.string(), kind: z.literal('turn') });
export type TurnDocument = z.infer<typeof turnDocumentSchema>;

export const toolResultRecordSchema = z.object({
  round: z.number().int().nonnegative(),
  index: z.number().int().nonnegative(),
  toolCallId: z.string(),
  name: z.string(),
  arguments: z.string(),
  result: z.string(),
  isError: z.boolean(),
  /** The call needed its user's yes and did not get it (denied, timed out): it did not run. */
  denied: z.literal(true).optional(),
  /** The knowledge-base chunks the call found (a `cited` result); absent when it found none. */
  sources: z.array(knowledgeSourceSchema).optional(),
  /** The call was not run: its MCP server needs the user to connect their account first. */
  connect: toolConnectNeedSchema.optional(),
});
export type ToolResultRecord = z.infer<typeof toolResultRecordSchema>;

export const toolResultDocumentSchema = toolResultRecordSchema.extend({
  ...turnRefSchema.shape,
  id: z.string(),
  kind: z.literal('tool-result'),
});
export type ToolResultDocument = z.infer<typeof toolResultDocumentSchema>;

/** The id of a turn's cancellation in the hot container (beside the turn's record, in the session's partition). */
export function turnCancellationDocumentId(chatMessageId: string): string {
  return `cancel.${chatMessageId}`;
}

/**
 * The owner asked to stop the turn: created once (a second request finds it), read by the turn's steps before each
 * model round and tool call and, while a model stream is open, once per poll interval. Expires with the hot store.
 */
export const turnCancellationDocumentSchema = turnRefSchema.extend({
  id: z.string(),
  kind: z.literal('turn-cancellation'),
  requestedAt: z.iso.datetime(),
});
export type TurnCancellationDocument = z.infer<typeof turnCancellationDocumentSchema>;

export const postedMessageDocumentSchema = postedMessageSchema.extend({
  id: z.string(),
  kind: z.literal('posted-message'),
  /** The stream tickets given out for it (hashes), newest last; absent in records written before tickets were. */
  streamTickets: z
    .array(z.object({ sha256: z.string().regex(/^[0-9a-f]{64}$/), expiresAt: z.iso.datetime() }))
    .optional(),
});
export type PostedMessageDocument = z.infer<typeof postedMessageDocumentSchema>;
