// What shapes a conversation beyond its messages, chosen at its start and kept on its session: the model, the
// memory mode, the assistant (by id and version, so an edit never rewrites what it was told), the project, and
// whether it is temporary.
import { z } from 'zod';
import { assistantIdSchema, projectIdSchema } from '../ids.js';
import { modelIdSchema } from '../ids.js';
import { memoryModeSchema, type MemoryMode } from './memory-mode.js';

export const assistantRefSchema = z.object({
  assistantId: assistantIdSchema,
  version: z.number().int().positive(),
  /** The assistant keeps its own memory (its memory mode at that version): the conversation reads and writes it. */
  ownMemory: z.literal(true).optional(),
});
export type AssistantRef = z.infer<typeof assistantRefSchema>;

export const conversationShapeShape = {
  /** The catalogue's model the conversation runs on; absent: the catalogue's default. */
  model: modelIdSchema.optional(),
  /** What its turns do with long-term memory; absent: readwrite. A temporary conversation's is off. */
  memory: memoryModeSchema.optional(),
  /** The assistant it was started with, at the version it had then. */
  assistant: assistantRefSchema.optional(),
  /** The project it is filed in. */
  projectId: projectIdSchema.optional(),
  /** Temporary: memory off, in no list or search, deleted after CHAT_TEMPORARY_TTL_SECONDS. */
  temporary: z.literal(true).optional(),
};
export const conversationShapeSchema = z.object(conversationShapeShape);
export type ConversationShape = z.infer<typeof conversationShapeSchema>;

/** The shape's fields that are set (a session document keeps only those). */
export function shapeFields(shape: ConversationShape): ConversationShape {
  return Object.fromEntries(Object.entries(shape).filter(([, value]) => value !== undefined));
}

/**
 * The memory mode the conversation allows its turns: off when temporary, unless it was made with a mode of its own
 * (the OpenAI-compatible API's temporary conversations read memory by default).
 */
export function conversationMemoryMode(shape: ConversationShape): MemoryMode {
  return shape.temporary === true ? (shape.memory ?? 'off') : (shape.memory ?? 'readwrite');
}

/** What a conversation's assistant and project give it: instructions to open with, and documents as knowledge. */
export interface ConversationGuidance {
  /** Undefined when neither has any (or the assistant or project is gone). */
  instructions: string | undefined;
  /** The union of the documents both name; undefined when neither names any. */
  documentIds: string[] | undefined;
  /** The built-in tools the assistant names at its version; undefined: all of them. */
  tools: string[] | undefined;
}

/** Reads what a conversation's assistant (at its version) and project give it. */
export type ConversationInstructions = (
  userId: string,
  shape: { assistant?: AssistantRef | undefined; projectId?: string | undefined },
) => Promise<ConversationGuidance>;

/** The system prompt with a conversation's instructions after it, each under its own heading. */
export function withInstructions(base: string, instructions: string | undefined): string {
  return instructions === undefined || instructions.trim() === ''
    ? base
    : `${base}\n\n${instructions.trim()}`;
}
