// Attribute builders of the OpenTelemetry GenAI semantic conventions (names copied from the incubating registry,
// which may still change): model calls, tools and retrievals. Message text goes only through the `*Content` builders.
import type { Attributes } from '@opentelemetry/api';

export type GenAiOperation = 'chat' | 'embeddings' | 'retrieval' | 'execute_tool';

/** `gen_ai.provider.name` of the endpoints the app speaks to. */
export function genAiProvider(kind: 'openai-compatible' | 'azure-openai'): string {
  return kind === 'azure-openai' ? 'azure.ai.openai' : 'openai';
}

/** `{operation} {target}`: the span name the conventions give model calls, tools and retrievals. */
export function genAiSpanName(operation: GenAiOperation, target: string | undefined): string {
  return target ? `${operation} ${target}` : operation;
}

export interface ModelRequest {
  operation: 'chat' | 'embeddings';
  provider: string;
  model: string;
  stream?: boolean;
  conversationId?: string | undefined;
  maxTokens?: number | undefined;
}

export function modelRequestAttributes(request: ModelRequest): Attributes {
  return {
    'gen_ai.operation.name': request.operation,
    'gen_ai.provider.name': request.provider,
    'gen_ai.request.model': request.model,
    ...(request.stream !== undefined ? { 'gen_ai.request.stream': request.stream } : {}),
    ...(request.conversationId !== undefined ? { 'gen_ai.conversation.id': request.conversationId } : {}),
    ...(request.maxTokens !== undefined ? { 'gen_ai.request.max_tokens': request.maxTokens } : {}),
  };
}

export interface ModelUsage {
  inputTokens: number;
  outputTokens: number;
  reasoningTokens?: number | undefined;
  cachedInputTokens?: number | undefined;
}

export function usageAttributes(usage: ModelUsage): Attributes {
  return {
    'gen_ai.usage.input_tokens': usage.inputTokens,
    'gen_ai.usage.output_tokens': usage.outputTokens,
    ...(usage.reasoningTokens !== undefined
      ? { 'gen_ai.usage.reasoning.output_tokens': usage.reasoningTokens }
      : {}),
    ...(usage.cachedInputTokens !== undefined
      ? { 'gen_ai.usage.cache_read.input_tokens': usage.cachedInputTokens }
      : {}),
  };
}

export function modelResponseAttributes(response: {
  model?: string | undefined;
  finishReason?: string | undefined;
}): Attributes {
  return {
    ...(response.model !== undefined ? { 'gen_ai.response.model': response.model } : {}),
    ...(response.finishReason !== undefined
      ? { 'gen_ai.response.finish_reasons': [response.finishReason] }
      : {}),
  };
}

export function toolAttributes(tool: { name: string; callId?: string | undefined }): Attributes {
  return {
    'gen_ai.operation.name': 'execute_tool',
    'gen_ai.tool.name': tool.name,
    'gen_ai.tool.type': 'function',
    ...(tool.callId !== undefined ? { 'gen_ai.tool.call.id': tool.callId } : {}),
  };
}

export function retrievalAttributes(retrieval: { dataSource: string; topK: number }): Attributes {
  return {
    'gen_ai.operation.name': 'retrieval',
    'gen_ai.data_source.id': retrieval.dataSource,
    'gen_ai.retrieval.top_k': retrieval.topK,
  };
}

/** A message as the app's model port speaks it (Chat Completions roles). */
export interface ContentMessage {
  role: string;
  content?: string | null;
  tool_calls?: readonly { id: string; name: string; arguments: string }[] | undefined;
  tool_call_id?: string;
}

type Part =
  | { type: 'text'; content: string }
  | { type: 'tool_call'; id: string; name: string; arguments: string }
  | { type: 'tool_call_response'; id: string; response: string };

function partsOf(message: ContentMessage): Part[] {
  if (message.role === 'tool')
    return [{ type: 'tool_call_response', id: message.tool_call_id ?? '', response: message.content ?? '' }];
  const parts: Part[] = message.content ? [{ type: 'text', content: message.content }] : [];
  for (const call of message.tool_calls ?? [])
    parts.push({ type: 'tool_call', id: call.id, name: call.name, arguments: call.arguments });
  return parts;
}

/** Opt-in only: the prompt, as `gen_ai.system_instructions` and `gen_ai.input.messages` (JSON, convention shape). */
export function inputContent(messages: readonly ContentMessage[]): Attributes {
  const system = messages.filter((message) => message.role === 'system');
  const rest = messages.filter((message) => message.role !== 'system');
  return {
    ...(system.length > 0 ? { 'gen_ai.system_instructions': JSON.stringify(system.flatMap(partsOf)) } : {}),
    'gen_ai.input.messages': JSON.stringify(
      rest.map((message) => ({ role: message.role, parts: partsOf(message) })),
    ),
  };
}

/** Opt-in only: the model's answer as `gen_ai.output.messages`. */
export function outputContent(message: ContentMessage, finishReason: string | undefined): Attributes {
  return {
    'gen_ai.output.messages': JSON.stringify([
      {
        role: message.role,
        parts: partsOf(message),
        ...(finishReason ? { finish_reason: finishReason } : {}),
      },
    ]),
  };
}
