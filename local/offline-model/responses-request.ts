// The Responses API request bodies the offline model accepts (what the openai SDK sends), translated into the
// Chat Completions request its reply rules read. Unknown fields are accepted and ignored.
import { imageUrls } from './image-parts.js';
import { z } from 'zod';
import type { ChatCompletionRequest, ChatRequestMessage } from './request-schema.js';

/** The Responses API refuses a smaller `max_output_tokens`; the stand-in does too, so a client learns it here. */
export const MIN_MAX_OUTPUT_TOKENS = 16;

const textPart = z.looseObject({ type: z.string(), text: z.string().optional() });
const content = z.union([z.string(), z.array(textPart)]);

const messageItem = z.looseObject({
  type: z.literal('message').optional(),
  role: z.enum(['system', 'developer', 'user', 'assistant']),
  content,
});
const functionCallItem = z.looseObject({
  type: z.literal('function_call'),
  call_id: z.string().min(1),
  name: z.string().min(1),
  arguments: z.string(),
});
const functionCallOutputItem = z.looseObject({
  type: z.literal('function_call_output'),
  call_id: z.string().min(1),
  output: content,
});
/** Reasoning items a client sends back are accepted and skipped: the stand-in has no hidden state to restore. */
const reasoningItem = z.looseObject({ type: z.literal('reasoning') });

const inputItem = z.union([messageItem, functionCallItem, functionCallOutputItem, reasoningItem], {
  error: 'input items must be messages, function_call, function_call_output or reasoning items.',
});

const functionTool = z.looseObject({
  type: z.literal('function', { error: 'The offline model offers only function tools.' }),
  name: z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, 'Function names are 1-64 letters, digits, _ or -.'),
  description: z.string().nullable().optional(),
  parameters: z.record(z.string(), z.unknown()).nullable().optional(),
});

const textFormat = z.discriminatedUnion('type', [
  z.looseObject({ type: z.literal('text') }),
  z.looseObject({ type: z.literal('json_object') }),
  z.looseObject({
    type: z.literal('json_schema'),
    name: z.string(),
    schema: z.record(z.string(), z.unknown()).optional(),
  }),
]);

export const responsesRequest = z.looseObject({
  model: z.string().min(1),
  input: z.union([z.string(), z.array(inputItem)]),
  instructions: z.string().nullable().optional(),
  stream: z.boolean().nullable().optional(),
  tools: z.array(functionTool).max(128).optional(),
  tool_choice: z
    .union([
      z.enum(['none', 'auto', 'required']),
      z.looseObject({ type: z.literal('function'), name: z.string() }),
    ])
    .optional(),
  text: z.looseObject({ format: textFormat.optional() }).optional(),
  max_output_tokens: z
    .number()
    .int()
    .min(MIN_MAX_OUTPUT_TOKENS, `must be at least ${MIN_MAX_OUTPUT_TOKENS}`)
    .nullable()
    .optional(),
  reasoning: z
    .looseObject({
      effort: z.string().nullable().optional(),
      summary: z.enum(['auto', 'concise', 'detailed']).nullable().optional(),
    })
    .nullable()
    .optional(),
});

export type ResponsesRequest = z.infer<typeof responsesRequest>;

/** Whether the request asks for a summary of the reasoning (only then is one streamed, as OpenAI does). */
export function wantsReasoningSummary(request: ResponsesRequest): boolean {
  return request.reasoning?.summary != null;
}

/** The same conversation as a Chat Completions request, for the reply rules; undefined when it holds no message. */
export function toChatCompletionRequest(request: ResponsesRequest): ChatCompletionRequest | undefined {
  const messages: ChatRequestMessage[] = [];
  if (request.instructions) messages.push({ role: 'system', content: request.instructions });
  const items: Exclude<ResponsesRequest['input'], string> =
    typeof request.input === 'string' ? [{ role: 'user', content: request.input }] : request.input;
  for (const item of items) {
    if (item.type === 'reasoning') continue;
    if (item.type === 'function_call') {
      const call = {
        id: item.call_id,
        type: 'function' as const,
        function: { name: item.name, arguments: item.arguments },
      };
      // Calls that follow an assistant message (or one another) belong to it, as tool_calls do in Chat Completions.
      const last = messages.at(-1);
      if (last?.role === 'assistant') last.tool_calls = [...(last.tool_calls ?? []), call];
      else messages.push({ role: 'assistant', content: null, tool_calls: [call] });
    } else if (item.type === 'function_call_output') {
      messages.push({ role: 'tool', tool_call_id: item.call_id, content: textOf(item.output) });
    } else {
      messages.push({
        role: item.role === 'developer' ? 'system' : item.role,
        // Image parts are kept (as Chat Completions' image_url), for the rules that read them.
        content: imageUrls(item.content).length > 0 ? chatParts(item.content) : textOf(item.content),
      });
    }
  }
  if (messages.length === 0) return undefined;

  const format = request.text?.format;
  const choice = request.tool_choice;
  return {
    model: request.model,
    messages,
    stream: request.stream ?? false,
    ...(request.tools
      ? {
          tools: request.tools.map((tool) => ({
            type: 'function' as const,
            function: {
              name: tool.name,
              ...(tool.description ? { description: tool.description } : {}),
              ...(tool.parameters ? { parameters: tool.parameters } : {}),
            },
          })),
        }
      : {}),
    ...(choice !== undefined
      ? {
          tool_choice:
            typeof choice === 'string'
              ? choice
              : { type: 'function' as const, function: { name: choice.name } },
        }
      : {}),
    ...(format?.type === 'json_schema'
      ? {
          response_format: {
            type: 'json_schema' as const,
            json_schema: { name: format.name, schema: format.schema },
          },
        }
      : format?.type === 'json_object'
        ? { response_format: { type: 'json_object' as const } }
        : {}),
    ...(request.max_output_tokens != null ? { max_completion_tokens: request.max_output_tokens } : {}),
  };
}

/** A Responses message's parts as Chat Completions' text and image_url parts. */
function chatParts(value: z.infer<typeof content>): ChatRequestMessage['content'] {
  if (typeof value === 'string') return value;
  return value.map((part) =>
    part.type === 'input_image'
      ? { type: 'image_url', image_url: { url: imageUrls([part])[0] ?? '' } }
      : { type: 'text', text: part.text ?? '' },
  );
}

function textOf(value: z.infer<typeof content>): string {
  return typeof value === 'string' ? value : value.map((part) => part.text ?? '').join('');
}
