// Assistants' contracts: the container, the stored assistant (its head and one snapshot per version, so a
// conversation keeps what its version said), and the bodies of the assistants API.
import { z } from 'zod';
import type { ContainerSpec } from '../cosmos/container-spec.js';
import { assistantIdSchema, modelIdSchema, userIdSchema } from '../ids.js';

export const ASSISTANTS_CONTAINER = 'assistants';

export const assistantsContainers: readonly ContainerSpec[] = [
  {
    id: ASSISTANTS_CONTAINER,
    partitionKeyPaths: ['/assistantId'],
    defaultTtlSeconds: -1,
    purpose:
      'Assistants (instructions, model, tools, knowledge, memory, starters), one partition per assistant: its head and one snapshot per version, which conversations started with it keep reading.',
  },
];

/** Where an assistant's conversations keep what they learn: the user's shared memory, its own, or nowhere. */
export const ASSISTANT_MEMORY = ['user', 'assistant', 'none'] as const;
export type AssistantMemory = (typeof ASSISTANT_MEMORY)[number];

export const ASSISTANT_VISIBILITY = ['private', 'public'] as const;

const text = (max: number) =>
  z.string({ error: 'must be a string' }).max(max, `must be at most ${max} characters`);

/** The fields an owner sets (POST, and PATCH for any subset). */
export const assistantFieldsShape = {
  name: text(100).refine((value) => value.trim() !== '', 'must not be empty'),
  description: text(1_000).default(''),
  instructions: text(20_000).default(''),
  /** The catalogue's model its conversations start on; absent: the catalogue's default. */
  model: modelIdSchema.optional(),
  /**
   * Built-in tools it may call by name, and the user's MCP servers as `mcp:<serverId>` (naming none: no MCP tools);
   * absent: all of them.
   */
  tools: z.array(text(64)).max(32).optional(),
  /** Knowledge its conversations search: the private and shared libraries, or only some documents. */
  knowledge: z
    .object({ documentIds: z.array(z.string().regex(/^[0-9a-f]{32}$/, 'must be a documentId')).max(100) })
    .optional(),
  memory: z.enum(ASSISTANT_MEMORY, { error: 'must be "user", "assistant" or "none"' }).default('user'),
  starters: z.array(text(200)).max(6).default([]),
  visibility: z.enum(ASSISTANT_VISIBILITY, { error: 'must be "private" or "public"' }).default('private'),
};

export const createAssistantBodySchema = z.object(assistantFieldsShape, {
  error: 'the body must be a JSON object',
});
export type CreateAssistantBody = z.infer<typeof createAssistantBodySchema>;

export const updateAssistantBodySchema = z
  .object(
    {
      name: assistantFieldsShape.name.optional(),
      description: text(1_000).optional(),
      instructions: text(20_000).optional(),
      model: modelIdSchema.nullable().optional(),
      tools: z.array(text(64)).max(32).nullable().optional(),
      knowledge: assistantFieldsShape.knowledge.nullable(),
      memory: z.enum(ASSISTANT_MEMORY).optional(),
      starters: z.array(text(200)).max(6).optional(),
      visibility: z.enum(ASSISTANT_VISIBILITY).optional(),
    },
    { error: 'the body must be a JSON object' },
  )
  .refine((body) => Object.values(body).some((value) => value !== undefined), 'names nothing to change');
export type UpdateAssistantBody = z.infer<typeof updateAssistantBodySchema>;

export const assistantSchema = z.object({
  assistantId: assistantIdSchema,
  ownerId: userIdSchema,
  version: z.number().int().positive(),
  name: z.string(),
  description: z.string(),
  instructions: z.string(),
  model: z.string().optional(),
  tools: z.array(z.string()).optional(),
  knowledge: z.object({ documentIds: z.array(z.string()) }).optional(),
  memory: z.enum(ASSISTANT_MEMORY),
  starters: z.array(z.string()),
  visibility: z.enum(ASSISTANT_VISIBILITY),
  createdAt: z.iso.datetime(),
  updatedAt: z.iso.datetime(),
});
export type Assistant = z.infer<typeof assistantSchema>;

/** The head: the assistant as it is now. */
export const ASSISTANT_HEAD_ID = 'head';
export const assistantHeadSchema = assistantSchema.extend({
  id: z.literal(ASSISTANT_HEAD_ID),
  kind: z.literal('assistant'),
});

/** One snapshot per version, never changed: what conversations started on that version read. */
export function assistantVersionId(version: number): string {
  return `v${version}`;
}
export const assistantVersionSchema = assistantSchema.extend({
  id: z.string(),
  kind: z.literal('assistant-version'),
});

/** An assistant as the API shows it: whether the caller owns it. */
export const assistantViewSchema = assistantSchema.extend({ ownedByYou: z.boolean() });
export const assistantListSchema = z.object({ assistants: z.array(assistantViewSchema) });
export const assistantParamsSchema = z.object({ assistantId: assistantIdSchema });
