// The OpenAI-compatible API's contracts: the Chat Completions request as OpenAI's clients send it, the headers that
// choose a conversation and its memory, and the shapes answered (model list, completion, chunk).
import { z } from 'zod';
import { memoryModeSchema } from '../conversation/memory-mode.js';
import { sessionIdSchema } from '../ids.js';

/** A request body larger than this is refused (413): its messages travel with the turn on the queue. */
export const OPENAI_BODY_MAX_BYTES = 160 * 1024;

/** How many messages a request may carry. */
export const OPENAI_MAX_MESSAGES = 500;

/** An assistant offered as a model: `assistant:` and its id. */
export const ASSISTANT_MODEL_PREFIX = 'assistant:';

const textPartSchema = z.object({ type: z.literal('text'), text: z.string() });

/** Text, or text parts (images and other parts are not taken here). */
const contentSchema = z.union([z.string(), z.array(textPartSchema).max(100)]);

const toolCallSchema = z.object({
  id: z.string().min(1).max(200),
  type: z.literal('function').default('function'),
  function: z.object({ name: z.string().min(1).max(128), arguments: z.string() }),
});

export const completionMessageSchema = z.discriminatedUnion('role', [
  z.object({ role: z.literal('system'), content: contentSchema }),
  z.object({ role: z.literal('developer'), content: contentSchema }),
  z.object({ role: z.literal('user'), content: contentSchema }),
  z.object({
    role: z.literal('assistant'),
    content: contentSchema.nullable().optional(),
    tool_calls: z.array(toolCallSchema).max(64).optional(),
  }),
  z.object({ role: z.literal('tool'), tool_call_id: z.string().min(1).max(200), content: contentSchema }),
]);
export type CompletionMessage = z.infer<typeof completionMessageSchema>;

/** How deeply a tool's parameters (a JSON Schema) may nest: deeper is refused before anything serialises it. */
export const TOOL_PARAMETERS_MAX_DEPTH = 64;

/** Whether no object or array in the value lies deeper than `max` levels (walked without recursion). */
function nestsWithin(value: unknown, max: number): boolean {
  const pending: { item: unknown; depth: number }[] = [{ item: value, depth: 1 }];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    if (typeof next.item !== 'object' || next.item === null) continue;
    if (next.depth > max) return false;
    for (const child of Object.values(next.item)) pending.push({ item: child, depth: next.depth + 1 });
  }
  return true;
}

/**
 * A tool's parameters: any JSON object within the depth limit (the request's size bounds the rest). A deeper one
 * would overflow the stack of every JSON.stringify the turn's message goes through.
 */
export const toolParametersSchema = z
  .record(z.string(), z.unknown())
  .refine((value) => nestsWithin(value, TOOL_PARAMETERS_MAX_DEPTH), {
    message: `may nest at most ${TOOL_PARAMETERS_MAX_DEPTH} levels deep`,
  });

/** A tool the client runs itself: the model may call it, and the answer hands the call back. */
export const clientToolSchema = z.object({
  type: z.literal('function'),
  function: z.object({
    name: z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, 'must be 1 to 64 letters, digits, _ or -'),
    description: z.string().max(4000).optional(),
    parameters: toolParametersSchema.optional(),
    strict: z.boolean().nullable().optional(),
  }),
});
export type ClientTool = z.infer<typeof clientToolSchema>;

/** POST /api/v1/chat/completions. Sampling parameters OpenAI defines are accepted and left to the deployment. */
export const chatCompletionRequestSchema = z.looseObject({
  model: z.string().min(1).max(200),
  messages: z.array(completionMessageSchema).min(1).max(OPENAI_MAX_MESSAGES),
  stream: z.boolean().nullable().optional(),
  stream_options: z.object({ include_usage: z.boolean().optional() }).nullable().optional(),
  tools: z.array(clientToolSchema).max(64).optional(),
  n: z.literal(1, { error: 'only one choice (n: 1) is answered' }).nullable().optional(),
});
export type ChatCompletionRequest = z.infer<typeof chatCompletionRequestSchema>;

/** The headers that shape a request's conversation; absent ones leave it stateless with memory read. */
export const openAiHeadersSchema = z
  .object({
    'x-conversation-id': sessionIdSchema.optional(),
    'x-memory': memoryModeSchema.default('read'),
    'idempotency-key': z.string().min(1).max(255).optional(),
  })
  .transform((headers) => ({
    conversationId: headers['x-conversation-id'],
    memory: headers['x-memory'],
    idempotencyKey: headers['idempotency-key'],
  }));
export type OpenAiHeaders = z.output<typeof openAiHeadersSchema>;

export const openAiModelSchema = z.object({
  id: z.string(),
  object: z.literal('model'),
  created: z.number().int(),
  owned_by: z.string(),
});
export const openAiModelListSchema = z.object({
  object: z.literal('list'),
  data: z.array(openAiModelSchema),
});
export type OpenAiModel = z.infer<typeof openAiModelSchema>;

export const completionUsageSchema = z.object({
  prompt_tokens: z.number(),
  completion_tokens: z.number(),
  total_tokens: z.number(),
  prompt_tokens_details: z.object({ cached_tokens: z.number() }).optional(),
  completion_tokens_details: z.object({ reasoning_tokens: z.number() }).optional(),
});
export type CompletionUsage = z.infer<typeof completionUsageSchema>;

const wireToolCallSchema = z.object({
  id: z.string(),
  type: z.literal('function'),
  function: z.object({ name: z.string(), arguments: z.string() }),
});

export const chatCompletionSchema = z.object({
  id: z.string(),
  object: z.literal('chat.completion'),
  created: z.number().int(),
  model: z.string(),
  choices: z.array(
    z.object({
      index: z.number().int(),
      message: z.object({
        role: z.literal('assistant'),
        content: z.string().nullable(),
        reasoning_content: z.string().optional(),
        tool_calls: z.array(wireToolCallSchema).optional(),
      }),
      finish_reason: z.string(),
      logprobs: z.null(),
    }),
  ),
  usage: completionUsageSchema.optional(),
});
export type ChatCompletion = z.infer<typeof chatCompletionSchema>;

export const chatCompletionChunkSchema = z.object({
  id: z.string(),
  object: z.literal('chat.completion.chunk'),
  created: z.number().int(),
  model: z.string(),
  choices: z.array(
    z.object({
      index: z.number().int(),
      delta: z.object({
        role: z.literal('assistant').optional(),
        content: z.string().optional(),
        reasoning_content: z.string().optional(),
        tool_calls: z.array(wireToolCallSchema.extend({ index: z.number().int() })).optional(),
      }),
      finish_reason: z.string().nullable(),
    }),
  ),
  usage: completionUsageSchema.nullable().optional(),
});
export type ChatCompletionChunk = z.infer<typeof chatCompletionChunkSchema>;
