// Chat's queue contract: the `user-messages` message the front door publishes and the chat worker takes, and its
// Service Bus message id (duplicate detection is per queue, so it names the session).
import { z } from 'zod';
import { chatMessageIdSchema, sessionIdSchema, userIdSchema } from '../../ids.js';
import { turnForkSchema } from '../../conversation/branches.js';
import { messageAttachmentSchema } from '../../message-attachments.js';

/** Queue that carries posted chat messages to the chat worker (sessions on: FIFO per chat session). */
export const USER_MESSAGES_QUEUE = 'user-messages';

/**
 * The caller's Entra ID groups, as their identity named them when they posted: the operator's MCP servers given to a
 * `group:<id>` are offered in the turn by them. Bounded like a token's `groups` claim.
 */
export const callerGroupsSchema = z.array(z.string().min(1).max(128)).min(1).max(200);

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
  /** Set when the message replaces an earlier turn (an edit or a regenerate): the conversation branches there. */
  fork: turnForkSchema.optional(),
  /** The turn holds a QUOTA_CONCURRENT_TURNS slot from its admission: whatever ends it frees the slot. */
  quotaSlot: z.literal(true).optional(),
  /** The files the message carries, as stored (the model reads their bytes at the turn). */
  attachments: z.array(messageAttachmentSchema).optional(),
  /** The caller's groups (absent when their identity names none). */
  groups: callerGroupsSchema.optional(),
});
export type QueuedChatMessage = z.infer<typeof queuedChatMessageSchema>;

/**
 * `useMemory: false` when the turn was posted with use_memory false; nothing otherwise (absent means true), so the
 * messages and inputs of the usual turn keep the shape they always had.
 */
export function memoryFlag(input: { useMemory?: boolean | undefined }): { useMemory?: false } {
  return input.useMemory === false ? { useMemory: false } : {};
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
