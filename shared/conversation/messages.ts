// The message model of a conversation: a message as working memory, long-term history and prompt building keep
// it, the system prompt kept apart from it, and the reference to a turn every area passes around.
import { messageAttachmentSchema } from '../message-attachments.js';
import { z } from 'zod';
import { userIdSchema } from '../ids.js';
import { llmUsageSchema } from '../llm/llm-gateway.js';
import { turnBranchSchema } from './branches.js';
import { knowledgeSourceSchema } from './sources.js';

export const turnRefSchema = z.object({
  userId: userIdSchema,
  sessionId: z.string(),
  chatMessageId: z.string(),
});
/** Which turn: the user, the session and the message it answers. */
export type TurnRef = z.infer<typeof turnRefSchema>;

/** The most reasoning summary text a message keeps (its start: summaries state their plan first). */
export const MAX_KEPT_REASONING = 8_000;

export const turnFailureSchema = z.object({ code: z.string(), message: z.string() });
/** What a client is told when a turn fails; the details stay in the logs. */
export type TurnFailure = z.infer<typeof turnFailureSchema>;

/** One tool call of a turn, with the result the model was given. */
export const storedToolCallSchema = z.object({
  id: z.string(),
  name: z.string(),
  /** The JSON text of the arguments exactly as the model produced it. */
  arguments: z.string(),
  result: z.string(),
  isError: z.boolean(),
  /** The round of the turn the call belongs to (0 = the first, as in the tool-call and tool-result events). */
  round: z.number().int().nonnegative(),
});
export type StoredToolCall = z.infer<typeof storedToolCallSchema>;

/**
 * A conversation's system prompt as sent to the model: the conversation's first message (the personalised
 * prompt is stored first), kept apart from the numbered messages. `personalised`: rendered with the profile.
 */
export const systemPromptSchema = z.object({
  content: z.string(),
  personalised: z.boolean(),
  /** When the first turn rendered it. */
  createdAt: z.iso.datetime(),
  /** The project whose instructions it holds: a turn of a conversation filed elsewhere since renders its own. */
  projectId: z.string().optional(),
  /** The documents its assistant and project name as knowledge: the conversation's knowledge search reads only these. */
  documentIds: z.array(z.string()).optional(),
  /** The built-in tools its assistant names at its version: the conversation's turns offer only these. */
  tools: z.array(z.string()).optional(),
});
export type SystemPrompt = z.infer<typeof systemPromptSchema>;

/** A message of a conversation as the hot store, the long-term history and prompt building keep it. */
export const conversationMessageSchema = z.object({
  /** `${chatMessageId}_user` | `${chatMessageId}_assistant`. */
  messageId: z.string(),
  chatMessageId: z.string(),
  role: z.enum(['user', 'assistant']),
  content: z.string(),
  /** ISO 8601. */
  timestamp: z.string(),
  /** Assistant only: the tool calls of the turn and their results. */
  toolCalls: z.array(storedToolCallSchema).optional(),
  /** Assistant only. */
  finishReason: z.string().optional(),
  /** Assistant only: the tokens the turn's model calls used, as its `message-end` event reports them. */
  usage: llmUsageSchema.optional(),
  /**
   * Assistant only: the summary of the model's reasoning the turn streamed (every round's, at most
   * MAX_KEPT_REASONING characters, its start kept), and how long the model reasoned, when it was measured.
   */
  reasoning: z.object({ text: z.string(), durationMs: z.number().int().nonnegative().optional() }).optional(),
  /** Assistant only: the catalogue's model the turn called (absent on turns made before the catalogue). */
  model: z.string().optional(),
  /** Both messages of a turn posted with use_memory false: the turn neither read nor wrote long-term memory. */
  useMemory: z.literal(false).optional(),
  /** User only: the turn failed; the user's message is kept. */
  failure: turnFailureSchema.optional(),
  /** User only: the files the message carried. */
  attachments: z.array(messageAttachmentSchema).optional(),
  /**
   * Assistant only: the knowledge-base chunks the turn's tools found (deduplicated, in the order found, at most
   * MAX_TURN_SOURCES), as its `sources` event streamed them; absent when there were none.
   */
  sources: z.array(knowledgeSourceSchema).optional(),
  /**
   * The message's place in the conversation (0, 1, 2, ...), given by working memory when it commits the message;
   * absent only in the input of that commit. Long-term history orders and pages by it.
   */
  ordinal: z.number().int().nonnegative().optional(),
  /** The turn's place in the conversation's tree (both messages of a turn carry the same); absent on older turns. */
  branch: turnBranchSchema.optional(),
});
export type ConversationMessage = z.infer<typeof conversationMessageSchema>;
