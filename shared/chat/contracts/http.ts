// Chat's HTTP contracts: the bodies and parameters of POST /api/session/start, /api/chat, .../cancel and
// .../regenerate, and what they answer.
import { z } from 'zod';
import { attachmentIdSchema } from '../../message-attachments.js';
import {
  assistantIdSchema,
  chatMessageIdSchema,
  modelIdSchema,
  projectIdSchema,
  sessionIdSchema,
} from '../../ids.js';
import { memoryModeSchema, type MemoryMode } from '../../conversation/memory-mode.js';

/** /api/chat/{sessionId}/{chatMessageId}/cancel and .../regenerate. */
export const turnParamsSchema = z.object({ sessionId: sessionIdSchema, chatMessageId: chatMessageIdSchema });

/** POST .../{chatMessageId}/approvals/{approvalId}: an approval is named by its call's round and index. */
export const approvalParamsSchema = turnParamsSchema.extend({
  approvalId: z.string().regex(/^\d{1,6}-\d{1,6}$/, 'an approval id from the stream, like 1-0'),
});

/** The body of POST .../{chatMessageId}/regenerate: the new turn's id. */
export const regenerateBodySchema = z.object(
  {
    chatMessageId: chatMessageIdSchema,
    userId: z.string({ error: 'must be a string' }).max(128).optional(),
    model: modelIdSchema.optional(),
  },
  { error: 'the body must be a JSON object' },
);

/**
 * POST /api/session/start: a client may name its user (it must be the caller), the model, the memory mode, an
 * assistant, a project, and whether the chat is temporary; the body may also be empty.
 */
export const startSessionBodySchema = z
  .object(
    {
      userId: z.string({ error: 'must be a string' }).max(128).optional(),
      model: modelIdSchema.optional(),
      memory: memoryModeSchema.optional(),
      assistantId: assistantIdSchema.optional(),
      projectId: projectIdSchema.optional(),
      temporary: z.boolean({ error: 'must be true or false' }).optional(),
    },
    { error: 'the body must be a JSON object' },
  )
  .optional();

/** A posted chat message, as validated from the request body of POST /api/chat. */
export interface ChatRequest {
  sessionId: string;
  chatMessageId: string;
  text: string;
  /** Some clients send their user id; when present it must be the caller's. */
  userId?: string | undefined;
  /**
   * `use_memory` (also accepted as `useMemory`), default true. False: the turn neither reads nor writes
   * long-term memory (no profile in its prompt, no conversation search, nothing consolidated from it).
   */
  useMemory: boolean;
  /**
   * `memory`: what the turn does with long-term memory (off, read, readwrite); absent: as `use_memory` says when
   * it is given, else the conversation's mode.
   */
  memory?: MemoryMode;
  /** The catalogue's model this message is answered by; absent: the conversation's. */
  model?: string;
  /** Replaces this earlier user message of the session: the conversation branches there (TurnFork, origin edit). */
  editOf?: string;
  /** Ids of the caller's attachments (POST /api/attachments) the message carries. */
  attachments?: string[];
}

/** `question` is accepted as another name for `text`. */
export function chatRequestSchema(maxTextChars: number) {
  const text = z
    .string({ error: 'must be a string' })
    .refine((value) => value.trim() !== '', 'must not be empty')
    .refine((value) => value.length <= maxTextChars, `must be at most ${maxTextChars} characters`);
  return z
    .object(
      {
        sessionId: sessionIdSchema,
        chatMessageId: chatMessageIdSchema,
        text: text.optional(),
        question: text.optional(),
        userId: z.string({ error: 'must be a string' }).max(128).optional(),
        use_memory: z.boolean({ error: 'must be true or false' }).optional(),
        useMemory: z.boolean({ error: 'must be true or false' }).optional(),
        memory: memoryModeSchema.optional(),
        model: modelIdSchema.optional(),
        editOf: chatMessageIdSchema.optional(),
        attachments: z
          .array(attachmentIdSchema, { error: 'must be an array of attachmentIds' })
          .max(50)
          .optional(),
      },
      { error: 'the body must be a JSON object' },
    )
    .superRefine((body, context) => {
      if (body.text === undefined && body.question === undefined)
        context.addIssue({ code: 'custom', path: ['text'], message: 'is required' });
      else if (body.text !== undefined && body.question !== undefined && body.text !== body.question)
        context.addIssue({
          code: 'custom',
          path: ['question'],
          message: 'is another name for text: send one of them (or the same value in both)',
        });
      if (body.editOf !== undefined && body.editOf.toLowerCase() === body.chatMessageId.toLowerCase())
        context.addIssue({
          code: 'custom',
          path: ['editOf'],
          message: 'names the message being sent: give the earlier message it replaces',
        });
      if (body.use_memory !== undefined && body.useMemory !== undefined && body.use_memory !== body.useMemory)
        context.addIssue({
          code: 'custom',
          path: ['useMemory'],
          message: 'is another name for use_memory: send one of them (or the same value in both)',
        });
    })
    .transform((body): ChatRequest => ({
      sessionId: body.sessionId,
      chatMessageId: body.chatMessageId,
      text: body.text ?? body.question ?? '',
      userId: body.userId,
      useMemory: body.use_memory ?? body.useMemory ?? true,
      ...memoryChoice(body.memory ?? legacyMemoryMode(body.use_memory ?? body.useMemory)),
      ...(body.model !== undefined ? { model: body.model } : {}),
      ...(body.editOf !== undefined ? { editOf: body.editOf } : {}),
      ...(body.attachments?.length ? { attachments: body.attachments } : {}),
    }));
}

/** `use_memory` given: off or readwrite; not given: nothing (the conversation's mode). */
export function legacyMemoryMode(useMemory: boolean | undefined): MemoryMode | undefined {
  return useMemory === undefined ? undefined : useMemory ? 'readwrite' : 'off';
}

function memoryChoice(memory: MemoryMode | undefined): { memory?: MemoryMode } {
  return memory === undefined ? {} : { memory };
}

/** POST /api/chat's 202 body: the message is queued and its events stream at `stream`. */
export const chatAcceptedSchema = z.object({
  sessionId: z.string(),
  chatMessageId: z.string(),
  status: z.literal('queued'),
  stream: z
    .string()
    .describe("the turn's SSE URL, with a ticket that opens it without headers (also the Location)"),
});
export type ChatAccepted = z.infer<typeof chatAcceptedSchema>;

/**
 * POST /api/chat/{sessionId}/{chatMessageId}/cancel's answer: 202 `cancelling` while the turn is queued or running
 * (its stream ends with `message-end`, finish reason `cancelled`, unless it ends on its own first); 200 `finished`
 * when it had already ended, with how (`error` for a failed turn; absent when its events are gone).
 */
/** 202 to an approval's answer: the turn has it and goes on. */
export const approvalAnsweredSchema = z.object({ approvalId: z.string(), approved: z.boolean() });

export const turnCancellingSchema = z.object({
  sessionId: z.string(),
  chatMessageId: z.string(),
  status: z.literal('cancelling'),
});
export const turnFinishedSchema = z.object({
  sessionId: z.string(),
  chatMessageId: z.string(),
  status: z.literal('finished'),
  finishReason: z.string().optional(),
});
export type TurnCancelOutcome = z.infer<typeof turnCancellingSchema> | z.infer<typeof turnFinishedSchema>;

/**
 * POST /api/chat's body limit in bytes. JSON may spell any UTF-16 unit of the text as a 6-byte `\uXXXX` escape
 * (a surrogate pair is two units, 12 bytes), and `question` may repeat the text: so the text limit, counted in
 * characters, is the one a client meets, never the byte limit. The rest is room for the ids and field names.
 */
export function chatBodyMaxBytes(maxTextChars: number): number {
  return maxTextChars * 6 * 2 + 4 * 1024;
}
