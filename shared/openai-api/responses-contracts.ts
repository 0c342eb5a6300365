// The Responses API's request and answer as OpenAI's clients speak them (the subset a turn serves): text input or
// input items, instructions, function tools, previous_response_id; a response with message and function_call items.
import { z } from 'zod';
import { toolParametersSchema } from './contracts.js';

const inputTextSchema = z.object({ type: z.enum(['input_text', 'output_text', 'text']), text: z.string() });

const inputMessageSchema = z.object({
  type: z.literal('message').optional(),
  role: z.enum(['user', 'system', 'developer', 'assistant']),
  content: z.union([z.string(), z.array(inputTextSchema).max(100)]),
});

const functionCallSchema = z.object({
  type: z.literal('function_call'),
  call_id: z.string().min(1).max(200),
  name: z.string().min(1).max(128),
  arguments: z.string(),
});

const functionCallOutputSchema = z.object({
  type: z.literal('function_call_output'),
  call_id: z.string().min(1).max(200),
  output: z.string(),
});

export const responseInputItemSchema = z.union([
  inputMessageSchema,
  functionCallSchema,
  functionCallOutputSchema,
]);
export type ResponseInputItem = z.infer<typeof responseInputItemSchema>;

export const responseToolSchema = z.object({
  type: z.literal('function'),
  name: z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, 'must be 1 to 64 letters, digits, _ or -'),
  description: z.string().max(4000).nullable().optional(),
  parameters: toolParametersSchema.nullable().optional(),
  strict: z.boolean().nullable().optional(),
});

/** POST /api/v1/responses. Parameters OpenAI defines beyond these are accepted and left to the deployment. */
export const createResponseRequestSchema = z.looseObject({
  model: z.string().min(1).max(200),
  input: z.union([z.string().min(1), z.array(responseInputItemSchema).min(1).max(500)]),
  instructions: z.string().max(100_000).nullable().optional(),
  previous_response_id: z.string().min(1).max(200).nullable().optional(),
  stream: z.boolean().nullable().optional(),
  tools: z.array(responseToolSchema).max(64).optional(),
});
export type CreateResponseRequest = z.infer<typeof createResponseRequestSchema>;

const outputTextSchema = z.object({
  type: z.literal('output_text'),
  text: z.string(),
  annotations: z.array(z.unknown()),
});

export const responseOutputItemSchema = z.union([
  z.object({
    type: z.literal('message'),
    id: z.string(),
    status: z.string(),
    role: z.literal('assistant'),
    content: z.array(outputTextSchema),
  }),
  z.object({
    type: z.literal('function_call'),
    id: z.string(),
    call_id: z.string(),
    name: z.string(),
    arguments: z.string(),
    status: z.string(),
  }),
]);
export type ResponseOutputItem = z.infer<typeof responseOutputItemSchema>;

export const responseUsageSchema = z.object({
  input_tokens: z.number(),
  input_tokens_details: z.object({ cached_tokens: z.number() }),
  output_tokens: z.number(),
  output_tokens_details: z.object({ reasoning_tokens: z.number() }),
  total_tokens: z.number(),
});

export const responseSchema = z.object({
  id: z.string(),
  object: z.literal('response'),
  created_at: z.number().int(),
  status: z.enum(['in_progress', 'completed', 'failed', 'incomplete']),
  model: z.string(),
  output: z.array(responseOutputItemSchema),
  previous_response_id: z.string().nullable(),
  usage: responseUsageSchema.nullable(),
  error: z.object({ code: z.string(), message: z.string() }).nullable(),
  incomplete_details: z.null(),
  instructions: z.string().nullable(),
  parallel_tool_calls: z.boolean(),
  tool_choice: z.literal('auto'),
  tools: z.array(z.unknown()),
  metadata: z.record(z.string(), z.string()),
});
export type ResponseObject = z.infer<typeof responseSchema>;

export const responseStreamEventSchema = z.object({ type: z.string(), sequence_number: z.number().int() });
