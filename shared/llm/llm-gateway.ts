// The LLM port: the messages, tools and replies a chat turn speaks, the gateway interface, and LlmError.
// Shapes follow the Chat Completions vocabulary so they map one-to-one onto every OpenAI-compatible API. The
// message, tool call and usage schemas are also what turn records store (shared/chat/contracts/documents.ts).
import { messageAttachmentSchema } from '../message-attachments.js';
import { z } from 'zod';
import { DependencyError } from '../errors.js';

/** One assembled tool call. `arguments` is the JSON text exactly as the model produced it. */
export const toolCallSchema = z.object({ id: z.string(), name: z.string(), arguments: z.string() });
export type ToolCall = z.infer<typeof toolCallSchema>;

export const chatMessageSchema = z.discriminatedUnion('role', [
  z.object({ role: z.literal('system'), content: z.string() }),
  z.object({
    role: z.literal('user'),
    content: z.string(),
    /** Files the message carries: the gateway's reader puts their content in the request at the call. */
    attachments: z.array(messageAttachmentSchema).optional(),
    /** Images read for this call (base64), sent after the text; never stored. */
    images: z.array(z.object({ mediaType: z.string(), data: z.string() })).optional(),
  }),
  z.object({
    role: z.literal('assistant'),
    content: z.string(),
    tool_calls: z.array(toolCallSchema).optional(),
  }),
  z.object({ role: z.literal('tool'), tool_call_id: z.string(), content: z.string() }),
]);
export type ChatMessage = z.infer<typeof chatMessageSchema>;

export const llmUsageSchema = z.object({
  promptTokens: z.number(),
  completionTokens: z.number(),
  totalTokens: z.number(),
  /** Present when the provider reports it (in completion_tokens_details or, for DeepSeek, at the top level). */
  reasoningTokens: z.number().optional(),
  cachedPromptTokens: z.number().optional(),
});
export type LlmUsage = z.infer<typeof llmUsageSchema>;

/** A function the model may call; `parameters` is a JSON schema for its arguments. */
export interface ToolSpec {
  name: string;
  description: string;
  parameters: Record<string, unknown>;
}

/**
 * Incremental output while a completion streams; a `tool-call` delta announces a call once its name is known. The
 * Responses API streams reasoning summaries in parts: `reasoning-end` closes each part (Chat Completions has no
 * parts, and never sends it).
 */
export type LlmDelta =
  | { type: 'content'; text: string }
  | { type: 'reasoning'; text: string }
  | { type: 'reasoning-end' }
  | { type: 'tool-call'; index: number; id: string; name: string };

/** What the model replied in one streamed call. */
export interface LlmReply {
  content: string;
  /** All the reasoning text; with summary parts (Responses API), their plain concatenation. */
  reasoning: string;
  /** The reasoning summary's parts, in order, when the API streams it in parts (Responses API). */
  reasoningParts?: string[];
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
  /** The chat model (deployment) to call, of the catalogue; absent: the connection's own. */
  model?: string;
}

export interface CompleteJsonRequest<T> {
  messages: ChatMessage[];
  schema: z.ZodType<T>;
  /** Names the response format (letters, digits, `_` and `-`; at most 64 characters). */
  name: string;
  /** What the answer is for where its format's name does not say (an exchange's index that also titles it). */
  purpose?: 'title';
  /** Told the tokens of each request made (a corrective second ask is a second request), for cost accounting. */
  onUsage?: (call: LlmCallUsage) => void;
}

/** What one request to the model used, and the model that answered (when the answer names it). */
export interface LlmCallUsage {
  usage: LlmUsage;
  model?: string;
}

export interface EmbedOptions {
  /** Told the tokens of each request made (texts go in batches), for cost accounting. */
  onUsage?: (call: LlmCallUsage) => void;
}

export interface LlmGateway {
  /** Streams one chat completion; calls onDelta as text/reasoning arrive; resolves with the assembled reply. */
  streamChat(request: StreamChatRequest, onDelta?: (delta: LlmDelta) => void): Promise<LlmReply>;
  /** JSON output validated by a zod schema (response_format json_schema derived with zod 4's z.toJSONSchema). */
  completeJson<T>(request: CompleteJsonRequest<T>): Promise<T>;
  embed(texts: string[], options?: EmbedOptions): Promise<number[][]>;
  /** Cheap reachability check for /api/health (lists the models); never throws. */
  probe(): Promise<{ ok: boolean; detail: string }>;
}

/** The API chat turns and JSON output go through; embeddings always use `/embeddings`. */
export type LlmApi = 'chat-completions' | 'responses';
export const LLM_APIS = ['chat-completions', 'responses'] as const satisfies readonly LlmApi[];

/** The reasoning effort a reasoning model is asked for (and, on the Responses API, a summary of its reasoning). */
export const REASONING_EFFORTS = ['none', 'minimal', 'low', 'medium', 'high', 'xhigh'] as const;
export type ReasoningEffort = (typeof REASONING_EFFORTS)[number];

/**
 * The reasoning summary asked for on the Responses API along with an effort: `off` asks for none (OpenAI streams
 * summaries only to verified organisations, and refuses the request otherwise).
 */
export const REASONING_SUMMARIES = ['auto', 'concise', 'detailed', 'off'] as const;
export type ReasoningSummary = (typeof REASONING_SUMMARIES)[number];

/** How chat requests are made, whichever the endpoint. */
export interface LlmCallStyle {
  /** Default: chat-completions. */
  api?: LlmApi;
  /**
   * Absent: no reasoning options are sent (models that do not reason refuse them). Present: `reasoning_effort`
   * (Chat Completions) or `reasoning: { effort, summary: 'auto' }` (Responses API) on chat turns.
   */
  reasoningEffort?: ReasoningEffort;
  /** The summary asked for with the effort on the Responses API (default auto). */
  reasoningSummary?: ReasoningSummary;
}

export type LlmConnection = LlmCallStyle &
  (
    | {
        kind: 'openai-compatible';
        baseUrl: string;
        apiKey?: string | undefined;
        chatModel: string;
        embeddingModel: string;
      }
    | {
        kind: 'azure-openai';
        /** Called on its v1 route, `{endpoint}/openai/v1`, with the deployment names as models. */
        endpoint: string;
        chatDeployment: string;
        embeddingDeployment: string;
        /** Absent → Entra ID, with the app's one Azure credential (scope cognitiveservices). */
        apiKey?: string | undefined;
        /** The managed identity's client id, named in the hint when a token cannot be had. */
        managedIdentityClientId?: string | undefined;
      }
  );

export interface LlmGatewayOptions {
  /** Retries on 408/409/429/5xx and connection errors, waiting as retry-after-ms / retry-after say. */
  maxRetries: number;
  /** Bounds the wait for response headers and, while streaming, the silence between two chunks. */
  timeoutMs: number;
  /** Tests inject a scripted fetch. */
  fetch?: typeof fetch;
  /** Entra ID bearer tokens for azure-openai without apiKey, from the app's one credential. */
  azureAdTokenProvider?: () => Promise<string>;
  /** When set, an embedding of another length is refused: the vector indexes were created with this one. */
  embeddingDimensions?: number;
}

export interface LlmErrorDetails {
  /** HTTP status the provider answered with; absent for connection errors and errors inside a stream. */
  providerStatus?: number;
  /** The provider's error code (`"401"`, `"RateLimitReached"`, `"context_length_exceeded"`, ...). */
  providerCode?: string;
  /** Whether trying again later may succeed (rate limits, timeouts, 5xx, cut streams). */
  retryable: boolean;
}

/** Any failure of the LLM endpoint, with what the provider said and whether a retry may help. */
export class LlmError extends DependencyError {
  readonly providerStatus: number | undefined;
  readonly providerCode: string | undefined;
  readonly retryable: boolean;

  constructor(message: string, details: LlmErrorDetails, options?: { cause?: unknown }) {
    super('llm', message, options);
    this.providerStatus = details.providerStatus;
    this.providerCode = details.providerCode;
    this.retryable = details.retryable;
  }
}
