// The `message-completed` contract: how a finished turn is announced on Service Bus to the areas that consume it
// (history and memory), with the turn's messages as committed.
import { z } from 'zod';
import { conversationMessageSchema, systemPromptSchema, turnRefSchema } from './messages.js';
import { memoryScopeSchema } from './memory-scope.js';

/** Topic on which a finished turn is announced; each consumer (history, memory) has its own subscription. */
export const MESSAGE_COMPLETED_TOPIC = 'message-completed';

/** The `message-completed` message of a turn; its id makes a re-published announcement a duplicate. */
export function completedMessageId(sessionId: string, chatMessageId: string): string {
  return `${sessionId}.${chatMessageId}.completed`;
}

/**
 * A `message-completed` body larger than this carries its messages with tool results cut, then their sources'
 * excerpts, then their sources (`complete: false`): a Service Bus Standard message holds 256 KB with its headers.
 */
export const MESSAGE_COMPLETED_MAX_BYTES = 192 * 1024;

/**
 * The body of a `message-completed` message: which turn ended, how, and its messages as committed (the user's,
 * and the assistant's with its tool calls and results, or the failure), with their ordinals. The consumers
 * (history, memory) need nothing else, so they never read working memory. When the messages would make the body
 * larger than MESSAGE_COMPLETED_MAX_BYTES, their tool results are cut (then their sources) and `complete` is false:
 * a consumer that needs them whole reads the turn from working memory.
 */
export const messageCompletedSchema = turnRefSchema.extend({
  outcome: z.enum(['completed', 'failed']),
  completedAt: z.iso.datetime(),
  messages: z.array(conversationMessageSchema.extend({ ordinal: z.number().int().nonnegative() })),
  complete: z.boolean(),
  /** False: the turn was posted with use_memory false; the memory worker leaves it out. Absent means true. */
  useMemory: z.boolean().optional(),
  /** `read`: the turn read memory but may not add to it; the memory worker leaves it out. */
  memoryMode: z.literal('read').optional(),
  /**
   * Where what the turn taught is kept: its project's memory, its assistant's own, or (absent) the user's shared
   * memory (memory-scope.ts).
   */
  memoryScope: memoryScopeSchema.optional(),
  /** The caller's groups as their identity named them at the turn (absent: none): QUOTA_EXEMPT's `group:` entries. */
  groups: z.array(z.string().min(1).max(128)).min(1).max(200).optional(),
  /** On the turn that began the conversation: its system prompt, which history keeps as its first message. */
  systemPrompt: systemPromptSchema.optional(),
});
export type MessageCompleted = z.infer<typeof messageCompletedSchema>;
