// The History API's query strings, as zod schemas the endpoints parse at the edge: page sizes, continuation
// tokens, the search text, the order of messages and the export format.
import { projectIdSchema } from '../ids.js';
import { z } from 'zod';
import { pageLimitSchema } from '../validation.js';
import {
  DEFAULT_CONVERSATION_PAGE,
  DEFAULT_MESSAGE_PAGE,
  MAX_CONVERSATION_PAGE,
  MAX_MESSAGE_PAGE,
} from './contracts.js';
import { decodeMessageCursor } from './message-cursor.js';

/** Longest search text. */
const MAX_QUERY_CHARS = 200;

const BAD_TOKEN = 'is not a token this API gave: pass back the continuationToken of the previous page';

export const listConversationsQuerySchema = z.object({
  /** Only the conversations filed in this project. */
  projectId: projectIdSchema.optional(),
  limit: pageLimitSchema(MAX_CONVERSATION_PAGE, DEFAULT_CONVERSATION_PAGE),
  continuationToken: z.string().min(1, BAD_TOKEN).max(4096, BAD_TOKEN).optional(),
  q: z
    .string()
    .transform((value) => value.trim())
    .refine((value) => value !== '', 'must not be empty')
    .refine((value) => value.length <= MAX_QUERY_CHARS, `must be at most ${MAX_QUERY_CHARS} characters`)
    // Matching is by words: a q with none would match everything.
    .refine((value) => value === '' || /[\p{L}\p{N}]/u.test(value), 'must contain a letter or a digit')
    .optional(),
});
export type ListConversationsQuery = z.infer<typeof listConversationsQuerySchema>;

export const getConversationQuerySchema = z.object({
  limit: pageLimitSchema(MAX_MESSAGE_PAGE, DEFAULT_MESSAGE_PAGE),
  continuationToken: z
    .string()
    .transform((value, context) => {
      const cursor = decodeMessageCursor(value);
      if (cursor === undefined) context.addIssue({ code: 'custom', message: BAD_TOKEN });
      return cursor ?? z.NEVER;
    })
    .optional(),
  order: z.enum(['asc', 'desc'], { error: "must be 'asc' or 'desc'" }).default('asc'),
});
export type GetConversationQuery = z.infer<typeof getConversationQuerySchema>;

/** PUT .../branch answers the new path's first page: its size and order as GET takes them. */
export const switchBranchQuerySchema = z.object({
  limit: pageLimitSchema(MAX_MESSAGE_PAGE, DEFAULT_MESSAGE_PAGE),
  order: z.enum(['asc', 'desc'], { error: "must be 'asc' or 'desc'" }).default('asc'),
});
export type SwitchBranchQuery = z.infer<typeof switchBranchQuerySchema>;

export const exportFormatSchema = z.enum(['markdown', 'json'], { error: "must be 'markdown' or 'json'" });
export type ExportFormat = z.infer<typeof exportFormatSchema>;

export const exportQuerySchema = z.object({ format: exportFormatSchema.default('markdown') });
