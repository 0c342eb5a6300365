// What POST /api/chat accepts and what travels on the `user-messages` queue. Field names follow seed 000
// (`sessionId`, `chatMessageId`, `text`); `question` is accepted as another name for `text`.
import { z } from 'zod';
import { ValidationError } from '../errors.js';
import { chatMessageIdSchema, sessionIdSchema } from './ids.js';

/** A posted chat message, as validated from the request body. */
export interface ChatRequest {
  sessionId: string;
  chatMessageId: string;
  text: string;
  /** Seed 000's clients send their user id; when present it must be the caller's. */
  userId?: string;
}

/** The body of a `user-messages` queue message. */
export interface QueuedChatMessage {
  userId: string;
  sessionId: string;
  chatMessageId: string;
  text: string;
  /** When the front door accepted it (ISO 8601). */
  postedAt: string;
}

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
    })
    .transform((body): ChatRequest => ({
      sessionId: body.sessionId,
      chatMessageId: body.chatMessageId,
      text: body.text ?? body.question ?? '',
      userId: body.userId,
    }));
}

export const queuedChatMessageSchema = z.object({
  userId: z.string().min(1).max(128),
  sessionId: sessionIdSchema,
  chatMessageId: chatMessageIdSchema,
  text: z.string().min(1),
  postedAt: z.iso.datetime(),
});

/** Parses with a schema; failures become one ValidationError listing every problem by field. */
export function parseInput<T>(schema: z.ZodType<T>, value: unknown, what: string): T {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  const issues = parsed.error.issues.map((issue) => ({
    path: issue.path.map(String).join('.') || '(body)',
    message: issue.message,
  }));
  throw new ValidationError(
    `Invalid ${what}: ${issues.map((issue) => `${issue.path} ${issue.message}`).join('; ')}.`,
    issues,
  );
}
