// Pure mapping from the LLM port's messages, tools and options to Responses API request fields (openai-node's
// ResponseCreateParams). Reasoning is never sent back, as on Chat Completions: the port keeps no reasoning items,
// and with `store: false` a later request cannot point at them either.
import type OpenAI from 'openai';
import type { ChatMessage, ReasoningEffort, ReasoningSummary, ToolSpec } from '../llm-gateway.js';

type ResponseInputItem = OpenAI.Responses.ResponseInputItem;
type FunctionTool = OpenAI.Responses.FunctionTool;

/** The Responses API's lowest `max_output_tokens`: a smaller cap is a 400. */
export const MIN_MAX_OUTPUT_TOKENS = 16;

/**
 * The leading system messages become `instructions` (the prompt's system prompt and digest, joined as separate
 * paragraphs); any later one stays in place as a developer message. User and assistant text become input
 * messages, an assistant's tool calls `function_call` items echoing their call ids, tool results
 * `function_call_output` items.
 */
export function toResponsesInput(messages: readonly ChatMessage[]): {
  instructions?: string;
  input: ResponseInputItem[];
} {
  const leading: string[] = [];
  let start = 0;
  while (messages[start]?.role === 'system') leading.push(messages[start++]!.content);
  const input: ResponseInputItem[] = [];
  for (const message of messages.slice(start)) {
    switch (message.role) {
      case 'system':
        input.push({ role: 'developer', content: message.content });
        break;
      case 'user':
        input.push(
          message.images?.length
            ? {
                role: 'user',
                content: [
                  { type: 'input_text', text: message.content },
                  ...message.images.map((image) => ({
                    type: 'input_image' as const,
                    image_url: `data:${image.mediaType};base64,${image.data}`,
                    detail: 'auto' as const,
                  })),
                ],
              }
            : { role: 'user', content: message.content },
        );
        break;
      case 'assistant':
        if (message.content !== '') input.push({ role: 'assistant', content: message.content });
        for (const call of message.tool_calls ?? [])
          input.push({ type: 'function_call', call_id: call.id, name: call.name, arguments: call.arguments });
        break;
      case 'tool':
        input.push({ type: 'function_call_output', call_id: message.tool_call_id, output: message.content });
        break;
    }
  }
  return leading.length > 0 ? { instructions: leading.join('\n\n'), input } : { input };
}

/** Function tools; `strict: false` because the tools' schemas are not all strict-compatible (optional fields). */
export function toResponsesTools(tools: readonly ToolSpec[]): FunctionTool[] {
  return tools.map((tool) => ({
    type: 'function',
    name: tool.name,
    description: tool.description,
    parameters: tool.parameters,
    strict: false,
  }));
}

/**
 * The reasoning options of a chat turn. A summary is asked for with any effort but `none` (no reasoning, nothing
 * to summarise); models that do not reason refuse the whole `reasoning` object, hence no default.
 */
export function toResponsesReasoning(
  effort: ReasoningEffort | undefined,
  summary: ReasoningSummary = 'auto',
): OpenAI.Reasoning | undefined {
  if (effort === undefined) return undefined;
  return effort === 'none' || summary === 'off' ? { effort } : { effort, summary };
}
