// Pure mapping from the LLM port's messages and tools to Chat Completions request fields.
// Reasoning is never sent back: DeepSeek rejects `reasoning_content` in input messages.
import type OpenAI from 'openai';
import type { ChatMessage, ToolSpec } from '../llm-gateway.js';

type WireMessage = OpenAI.Chat.Completions.ChatCompletionMessageParam;
type WireTool = OpenAI.Chat.Completions.ChatCompletionFunctionTool;

export function toWireMessages(messages: readonly ChatMessage[]): WireMessage[] {
  return messages.map((message): WireMessage => {
    switch (message.role) {
      case 'system':
        return { role: message.role, content: message.content };
      case 'user':
        if (!message.images?.length) return { role: 'user', content: message.content };
        // Images as data URLs: nothing has to be reachable by the model, and the bytes are the same every turn.
        return {
          role: 'user',
          content: [
            { type: 'text', text: message.content },
            ...message.images.map((image) => ({
              type: 'image_url' as const,
              image_url: { url: `data:${image.mediaType};base64,${image.data}` },
            })),
          ],
        };
      case 'tool':
        return { role: 'tool', tool_call_id: message.tool_call_id, content: message.content };
      case 'assistant': {
        const calls = message.tool_calls ?? [];
        if (calls.length === 0) return { role: 'assistant', content: message.content };
        return {
          role: 'assistant',
          // OpenAI's own examples send null beside tool calls; some servers reject "".
          content: message.content === '' ? null : message.content,
          tool_calls: calls.map((call) => ({
            id: call.id,
            type: 'function',
            function: { name: call.name, arguments: call.arguments },
          })),
        };
      }
    }
  });
}

export function toWireTools(tools: readonly ToolSpec[]): WireTool[] {
  return tools.map((tool) => ({
    type: 'function',
    function: { name: tool.name, description: tool.description, parameters: tool.parameters },
  }));
}

/**
 * Which request field caps the output. OpenAI's and Azure's reasoning models refuse `max_tokens`;
 * Ollama, vLLM and llama.cpp have always accepted it, and not all of them know the newer name.
 */
export function maxTokensField(
  connection: { kind: 'azure-openai' } | { kind: 'openai-compatible'; baseUrl: string },
  maxTokens: number,
): { max_tokens: number } | { max_completion_tokens: number } {
  if (connection.kind === 'azure-openai' || isOpenAiHost(connection.baseUrl)) {
    return { max_completion_tokens: maxTokens };
  }
  return { max_tokens: maxTokens };
}

function isOpenAiHost(baseUrl: string): boolean {
  try {
    return new URL(baseUrl).hostname === 'api.openai.com';
  } catch {
    return false;
  }
}
