// Chat's queue contract: the `user-messages` message the front door publishes and the chat worker takes, and its
// Service Bus message id (duplicate detection is per queue, so it names the session).
import { z } from 'zod';
import { chatMessageIdSchema, sessionIdSchema, userIdSchema } from '../../ids.js';
import { turnForkSchema } from '../../conversation/branches.js';
import { messageAttachmentSchema } from '../../message-attachments.js';
import { memoryFields, memoryModeOf, type MemoryFields } from '../../conversation/memory-mode.js';
import { modelIdSchema, projectIdSchema } from '../../ids.js';
import { chatMessageSchema } from '../../llm/llm-gateway.js';
import { assistantRefSchema, type AssistantRef } from '../../conversation/conversation-shape.js';

/** Queue that carries posted chat messages to the chat worker (sessions on: FIFO per chat session). */
export const USER_MESSAGES_QUEUE = 'user-messages';

/**
 * The caller's Entra ID groups, as their identity named them when they posted: the operator's MCP servers given to a
 * `group:<id>` are offered in the turn by them. Bounded like a token's `groups` claim.
 */
export const callerGroupsSchema = z.array(z.string().min(1).max(128)).min(1).max(200);

/** A turn's given context: bounded so the message stays far below Service Bus's size limit. */
export const turnContextSchema = z.array(chatMessageSchema).max(500);

/** Tools the client runs itself (the OpenAI-compatible API): offered beside the turn's own, never run by it. */
export const clientToolsSchema = z
  .array(
    z.object({
      name: z.string().min(1).max(64),
      description: z.string().max(4000),
      parameters: z.record(z.string(), z.unknown()),
    }),
  )
  .min(1)
  .max(64);

/** The body of a `user-messages` message: validated when the front door publishes it and when the worker takes it. */
export const queuedChatMessageSchema = z.object({
  userId: userIdSchema,
  sessionId: sessionIdSchema,
  chatMessageId: chatMessageIdSchema,
  text: z.string().min(1),
  /** When the front door accepted it (ISO 8601). */
  postedAt: z.iso.datetime(),
  /** False: the turn neither reads nor writes long-term memory (ChatRequest.useMemory). Absent means true. */
  useMemory: z.boolean().optional(),
  /** `read`: the turn reads long-term memory but adds nothing to it. Absent: as useMemory says. */
  memoryMode: z.literal('read').optional(),
  /** The catalogue's model the turn calls (the conversation's, or the message's own choice). Absent: the default. */
  model: modelIdSchema.optional(),
  /** The assistant (and its version) the conversation was started with: its instructions open the conversation. */
  assistant: assistantRefSchema.optional(),
  /** The project the conversation is filed in: its instructions open the conversation. */
  projectId: projectIdSchema.optional(),
  /** A temporary chat: no header (in no list or search, so history keeps nothing of it) and memory off. */
  temporary: z.literal(true).optional(),
  /** Set when the message replaces an earlier turn (an edit or a regenerate): the conversation branches there. */
  fork: turnForkSchema.optional(),
  /** The turn holds a QUOTA_CONCURRENT_TURNS slot from its admission: whatever ends it frees the slot. */
  quotaSlot: z.literal(true).optional(),
  /** The files the message carries, as stored (the model reads their bytes at the turn). */
  attachments: z.array(messageAttachmentSchema).optional(),
  /** The caller's groups (absent when their identity names none). */
  groups: callerGroupsSchema.optional(),
  /**
   * A turn of the session may be parked on its user's yes (the session is marked): the chat worker looks for it
   * before answering. Absent: no turn of the session had waited when the message was posted, and nothing is read.
   */
  mayPark: z.literal(true).optional(),
  /**
   * The messages the model reads before this one, as a client of the OpenAI-compatible API gave them (its new
   * conversation has no history of its own): they stand in for the conversation's history in every round.
   */
  context: turnContextSchema.optional(),
  /** What followed the user's message in that context: the model's calls of client tools and their results. */
  followUp: turnContextSchema.optional(),
  /** The client's own tools: a round that calls one ends the turn with finish reason `tool_calls`. */
  clientTools: clientToolsSchema.optional(),
});
export type QueuedChatMessage = z.infer<typeof queuedChatMessageSchema>;

/**
 * The turn's memory mode as its messages and inputs carry it: `useMemory: false` when off, `memoryMode: 'read'` when
 * read only, nothing otherwise, so the messages and inputs of the usual turn keep the shape they always had.
 */
export function memoryFlag(input: {
  useMemory?: boolean | undefined;
  memoryMode?: 'read' | undefined;
}): MemoryFields {
  return memoryFields(memoryModeOf(input));
}

/** The conversation's assistant and project, when it has them; nothing otherwise. */
export function shapeFlags(input: { assistant?: AssistantRef | undefined; projectId?: string | undefined }): {
  assistant?: AssistantRef;
  projectId?: string;
} {
  return {
    ...(input.assistant === undefined ? {} : { assistant: input.assistant }),
    ...(input.projectId === undefined ? {} : { projectId: input.projectId }),
  };
}

/** `mayPark: true` when a turn of the session has waited for its user's yes; nothing otherwise. */
export function parkFlag(session: { approvals?: true | undefined } | undefined): { mayPark?: true } {
  return session?.approvals === true ? { mayPark: true } : {};
}

/** `temporary: true` for a temporary chat's turn; nothing otherwise. */
export function temporaryFlag(input: { temporary?: boolean | undefined }): { temporary?: true } {
  return input.temporary === true ? { temporary: true } : {};
}

/** `model` when the turn names one; nothing otherwise (the catalogue's default). */
export function modelFlag(input: { model?: string | undefined }): { model?: string } {
  return input.model === undefined ? {} : { model: input.model };
}

/** `quotaSlot: true` for a turn admitted with a slot; nothing otherwise (the usual shape). */
export function quotaSlotFlag(input: { quotaSlot?: boolean | undefined }): { quotaSlot?: true } {
  return input.quotaSlot === true ? { quotaSlot: true } : {};
}

/** `groups` when the identity named any; nothing otherwise (the usual shape). */
export function groupsFlag(input: { groups?: readonly string[] | undefined }): { groups?: string[] } {
  return input.groups === undefined || input.groups.length === 0 ? {} : { groups: [...input.groups] };
}

/** The `user-messages` message id: Service Bus duplicate detection is per queue, so it names the session. */
export function queuedMessageId(sessionId: string, chatMessageId: string): string {
  return `${sessionId}.${chatMessageId}`;
}
