// The LLM port: message, tool and result shapes the chat turn speaks, and createLlmGateway to get one.
// Shapes follow the Chat Completions vocabulary so they map one-to-one onto every OpenAI-compatible API.
import type { z } from 'zod';

export { createLlmGateway } from './openai-gateway.js';
export { LlmError } from './llm-errors.js';

/** One assembled tool call. `arguments` is the JSON text exactly as the model produced it. */
export interface ToolCall {
  id: string;
  name: string;
  arguments: string;
}

export type ChatMessage =
  | { role: 'system'; content: string }
  | { role: 'user'; content: string }
  | { role: 'assistant'; content: string; tool_calls?: ToolCall[] }
  | { role: 'tool'; tool_call_id: string; content: string };

/** A function the model may call; `parameters` is a JSON schema for its arguments. */
export interface ToolSpec {
  name: string;
  description: string;
  parameters: Record<string, unknown>;
}

/** Incremental output while a completion streams; a `tool-call` delta announces a call once its name is known. */
export type LlmDelta =
  | { type: 'content'; text: string }
  | { type: 'reasoning'; text: string }
  | { type: 'tool-call'; index: number; id: string; name: string };

export interface LlmUsage {
  promptTokens: number;
  completionTokens: number;
  totalTokens: number;
  /** Present when the provider reports it (in completion_tokens_details or, for DeepSeek, at the top level). */
  reasoningTokens?: number;
  cachedPromptTokens?: number;
}

export interface LlmStepResult {
  content: string;
  reasoning: string;
  toolCalls: ToolCall[];
  /**
   * The provider's finish reason (`stop`, `length`, `tool_calls`, `content_filter`, ...), or `cancelled`
   * when the caller's signal aborted the stream (content and reasoning then hold what arrived so far).
   */
  finishReason: string;
  usage?: LlmUsage;
  /** The model that answered, from the first chunk that names one. */
  model?: string;
}

export interface StreamChatRequest {
  messages: ChatMessage[];
  tools?: ToolSpec[];
  /** `none` keeps the tools (and earlier tool calls) in view but asks for a text answer. Default: auto. */
  toolChoice?: 'auto' | 'none' | 'required';
  signal?: AbortSignal;
  maxTokens?: number;
}

export interface CompleteJsonRequest<T> {
  messages: ChatMessage[];
  schema: z.ZodType<T>;
  /** Names the response format (letters, digits, `_` and `-`; at most 64 characters). */
  name: string;
}

export interface LlmGateway {
  /** Streams one chat completion; calls onDelta as text/reasoning arrive; resolves with the assembled step. */
  streamChat(request: StreamChatRequest, onDelta?: (delta: LlmDelta) => void): Promise<LlmStepResult>;
  /** JSON output validated by a zod schema (response_format json_schema derived with zod 4's z.toJSONSchema). */
  completeJson<T>(request: CompleteJsonRequest<T>): Promise<T>;
  embed(texts: string[]): Promise<number[][]>;
  /** Cheap reachability check for /api/health (lists the models); never throws. */
  probe(): Promise<{ ok: boolean; detail: string }>;
}

export type LlmConnection =
  | { kind: 'openai-compatible'; baseUrl: string; apiKey?: string; chatModel: string; embeddingModel: string }
  | {
      kind: 'azure-openai';
      endpoint: string;
      apiVersion: string;
      chatDeployment: string;
      embeddingDeployment: string;
      /** Absent → Entra ID: DefaultAzureCredential (managedIdentityClientId if given), scope cognitiveservices. */
      apiKey?: string;
      managedIdentityClientId?: string;
    };

export interface LlmGatewayOptions {
  /** Retries on 408/409/429/5xx and connection errors, waiting as retry-after-ms / retry-after say. */
  maxRetries: number;
  /** Bounds the wait for response headers and, while streaming, the silence between two chunks. */
  timeoutMs: number;
  /** Tests inject a scripted fetch. */
  fetch?: typeof fetch;
  /** Replaces DefaultAzureCredential for Entra ID (azure-openai without apiKey); returns a bearer token. */
  azureAdTokenProvider?: () => Promise<string>;
}
