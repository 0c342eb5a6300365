// The request bodies the offline model accepts, as zod schemas: the Chat Completions and Embeddings subset
// the openai SDK sends. Unknown fields (temperature, seed, ...) are accepted and ignored.
import { z } from 'zod';

const contentPart = z.looseObject({ type: z.string(), text: z.string().optional() });

const messageToolCall = z.looseObject({
  id: z.string(),
  type: z.literal('function').optional(),
  function: z.looseObject({ name: z.string(), arguments: z.string() }),
});

const message = z
  .looseObject({
    role: z.enum(['system', 'developer', 'user', 'assistant', 'tool']),
    content: z.union([z.string(), z.array(contentPart), z.null()]).optional(),
    tool_calls: z.array(messageToolCall).nullable().optional(),
    tool_call_id: z.string().optional(),
  })
  .refine((m) => m.role !== 'tool' || m.tool_call_id !== undefined, {
    message: 'A tool message needs tool_call_id.',
    path: ['tool_call_id'],
  });

const tool = z.looseObject({
  type: z.literal('function'),
  function: z.looseObject({
    name: z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, 'Function names are 1-64 letters, digits, _ or -.'),
    description: z.string().optional(),
    parameters: z.record(z.string(), z.unknown()).optional(),
  }),
});

const responseFormat = z.discriminatedUnion('type', [
  z.looseObject({ type: z.literal('text') }),
  z.looseObject({ type: z.literal('json_object') }),
  z.looseObject({
    type: z.literal('json_schema'),
    json_schema: z.looseObject({ name: z.string(), schema: z.record(z.string(), z.unknown()).optional() }),
  }),
]);

const positiveInt = z.number().int().positive().nullable().optional();

export const chatCompletionRequest = z.looseObject({
  model: z.string().min(1),
  messages: z.array(message).min(1),
  stream: z.boolean().nullable().optional(),
  stream_options: z.looseObject({ include_usage: z.boolean().optional() }).nullable().optional(),
  tools: z.array(tool).max(128).optional(),
  tool_choice: z
    .union([
      z.enum(['none', 'auto', 'required']),
      z.looseObject({ type: z.literal('function'), function: z.looseObject({ name: z.string() }) }),
    ])
    .optional(),
  response_format: responseFormat.optional(),
  max_tokens: positiveInt,
  max_completion_tokens: positiveInt,
  n: z.literal(1).nullable().optional(),
});

export type ChatCompletionRequest = z.infer<typeof chatCompletionRequest>;
export type ChatRequestMessage = ChatCompletionRequest['messages'][number];

export const embeddingRequest = z.looseObject({
  model: z.string().min(1),
  input: z.union([z.string(), z.array(z.string()).min(1).max(2048)], {
    error: 'input must be a string or an array of strings (the offline model does not take token arrays).',
  }),
  encoding_format: z.enum(['float', 'base64']).optional(),
  dimensions: z.number().int().min(1).max(4096).optional(),
});

/** The text of a message, whether its content is a string or an array of parts. */
export function messageText(message: ChatRequestMessage): string {
  const content = message.content;
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) return content.map((part) => part.text ?? '').join('');
  return '';
}

/** A structured-output request's input: the JSON object its last message holds, or undefined when it is not one. */
export function parseJsonObject(input: string): Record<string, unknown> | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(input);
  } catch {
    return undefined;
  }
  return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)
    ? (parsed as Record<string, unknown>)
    : undefined;
}
