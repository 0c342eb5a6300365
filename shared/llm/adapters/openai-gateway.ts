// The LLM adapter: one LlmGateway over the real openai SDK for OpenAI, Azure OpenAI, Ollama, vLLM,
// llama.cpp and the local offline model, through Chat Completions (the default) or the Responses API
// (connection.api). Retries (429/5xx, retry-after-ms / retry-after) are the SDK's own.
import type OpenAI from 'openai';
import { APIConnectionError, APIError, APIUserAbortError } from 'openai';
import { ChatStreamAssembler } from '../chat-stream-assembler.js';
import { decodeEmbedding } from '../embedding-decoding.js';
import { parseJsonOutput, toJsonSchemaResponseFormat } from '../json-output.js';
import {
  LlmError,
  type ChatMessage,
  type CompleteJsonRequest,
  type LlmConnection,
  type LlmDelta,
  type LlmGateway,
  type LlmGatewayOptions,
  type LlmReply,
  type StreamChatRequest,
} from '../llm-gateway.js';
import { ResponsesStreamAssembler, type ResponseFailure } from '../responses-stream-assembler.js';
import { maxTokensField, toWireMessages, toWireTools } from './openai-chat-request.js';
import { createOpenAiClient } from './openai-client-factory.js';
import { toLlmError, type LlmErrorContext } from './openai-errors.js';
import {
  MIN_MAX_OUTPUT_TOKENS,
  toResponsesInput,
  toResponsesReasoning,
  toResponsesTools,
} from './openai-responses-request.js';

/** One corrective turn when JSON output fails validation: models usually fix what they are told. */
const JSON_REPAIR_ATTEMPTS = 1;
/** Stays well under every provider's per-request input limit (OpenAI: 2048). */
const EMBEDDING_BATCH_SIZE = 256;
const PROBE_TIMEOUT_MS = 5_000;
/**
 * The Responses API's error codes a later attempt may get past (openai-node's ResponseError codes); any other
 * (insufficient_quota, invalid_prompt, ...) fails the same way again.
 */
const RETRYABLE_RESPONSE_CODES: ReadonlySet<string> = new Set([
  'server_error',
  'rate_limit_exceeded',
  'vector_store_timeout',
]);

/** One JSON-output answer, whichever API gave it. */
interface JsonAnswer {
  text: string;
  refusal: string | undefined;
  /** The answer stopped at the token limit. */
  truncated: boolean;
}

/** What both stream assemblers offer the gateway's one streaming loop. */
interface StreamAssembler {
  push(event: unknown): LlmDelta[];
  readonly finished: boolean;
  result(finishReason?: string): LlmReply;
}

/** Throws an LlmError naming the problem when the connection cannot make a client (e.g. no way to sign in). */
export function createLlmGateway(connection: LlmConnection, options: LlmGatewayOptions): LlmGateway {
  let client: OpenAI;
  try {
    client = createOpenAiClient(connection, options);
  } catch (error) {
    throw toLlmError(error, {
      endpoint:
        connection.kind === 'azure-openai' ? `Azure OpenAI ${connection.endpoint}` : connection.baseUrl,
      model: connection.kind === 'azure-openai' ? connection.chatDeployment : connection.chatModel,
      kind: connection.kind,
      timeoutMs: options.timeoutMs,
    });
  }
  return new OpenAiGateway(connection, options, client, connection.api === 'responses' ? client : undefined);
}

class OpenAiGateway implements LlmGateway {
  readonly #chatModel: string;
  readonly #embeddingModel: string;
  readonly #endpoint: string;

  constructor(
    private readonly connection: LlmConnection,
    private readonly options: LlmGatewayOptions,
    private readonly client: OpenAI,
    /** Set when chat turns and JSON output go through the Responses API. */
    private readonly responsesClient: OpenAI | undefined,
  ) {
    if (connection.kind === 'azure-openai') {
      this.#chatModel = connection.chatDeployment;
      this.#embeddingModel = connection.embeddingDeployment;
      this.#endpoint = `Azure OpenAI ${connection.endpoint}`;
    } else {
      this.#chatModel = connection.chatModel;
      this.#embeddingModel = connection.embeddingModel;
      this.#endpoint = `LLM endpoint ${connection.baseUrl}`;
    }
  }

  streamChat(request: StreamChatRequest, onDelta?: (delta: LlmDelta) => void): Promise<LlmReply> {
    const responses = this.responsesClient;
    return responses
      ? this.#streamResponse(responses, request, onDelta)
      : this.#streamCompletion(request, onDelta);
  }

  #streamCompletion(request: StreamChatRequest, onDelta?: (delta: LlmDelta) => void): Promise<LlmReply> {
    const assembler = new ChatStreamAssembler();
    const effort = this.connection.reasoningEffort;
    return this.#stream(
      request,
      onDelta,
      assembler,
      (signal) =>
        this.client.chat.completions.create(
          {
            model: this.#chatModel,
            messages: toWireMessages(request.messages),
            stream: true,
            stream_options: { include_usage: true },
            ...(request.tools && request.tools.length > 0
              ? { tools: toWireTools(request.tools), tool_choice: request.toolChoice ?? 'auto' }
              : {}),
            ...(request.maxTokens !== undefined ? maxTokensField(this.connection, request.maxTokens) : {}),
            ...(effort !== undefined ? { reasoning_effort: effort } : {}),
          },
          { signal },
        ),
      (error) => toLlmError(error, this.#errorContext(this.#chatModel)),
      () => {
        // Without [DONE] or a finish_reason the connection was cut: a partial answer must not pass as complete.
        if (!assembler.finished) throw this.#cutShort();
        return assembler.result();
      },
    );
  }

  #streamResponse(
    client: OpenAI,
    request: StreamChatRequest,
    onDelta?: (delta: LlmDelta) => void,
  ): Promise<LlmReply> {
    const assembler = new ResponsesStreamAssembler();
    const { instructions, input } = toResponsesInput(request.messages);
    const reasoning = toResponsesReasoning(this.connection.reasoningEffort, this.connection.reasoningSummary);
    return this.#stream(
      request,
      onDelta,
      assembler,
      (signal) =>
        client.responses.create(
          {
            model: this.#chatModel,
            ...(instructions !== undefined ? { instructions } : {}),
            input,
            stream: true,
            // The app keeps the conversation itself; nothing needs to be stored by the provider.
            store: false,
            ...(request.tools && request.tools.length > 0
              ? { tools: toResponsesTools(request.tools), tool_choice: request.toolChoice ?? 'auto' }
              : {}),
            ...(request.maxTokens !== undefined
              ? { max_output_tokens: Math.max(MIN_MAX_OUTPUT_TOKENS, request.maxTokens) }
              : {}),
            ...(reasoning ? { reasoning } : {}),
          },
          { signal },
        ),
      (error) =>
        // The SDK throws on an `error` event whose details are nested under `error` (the wire's shape); one with
        // them at the top level reaches the assembler instead. Both are the provider's in-band failure.
        isInBandError(error)
          ? this.#responseFailed(failureOf(error))
          : toLlmError(error, this.#errorContext(this.#chatModel)),
      () => {
        if (assembler.failure) throw this.#responseFailed(assembler.failure);
        if (!assembler.finished) throw this.#cutShort();
        return assembler.result();
      },
    );
  }

  /**
   * The one streaming loop: the caller's cancellation and an idle timeout abort the request; cancellation
   * resolves with what arrived (finish reason `cancelled`), a stall or a broken stream rejects with an LlmError,
   * an exception from onDelta escapes unchanged.
   */
  async #stream(
    request: StreamChatRequest,
    onDelta: ((delta: LlmDelta) => void) | undefined,
    assembler: StreamAssembler,
    open: (signal: AbortSignal) => Promise<AsyncIterable<unknown>>,
    toError: (error: unknown) => LlmError,
    complete: () => LlmReply,
  ): Promise<LlmReply> {
    // One controller carries both the caller's cancellation and our idle timeout into the SDK.
    const controller = new AbortController();
    const cancel = () => controller.abort();
    request.signal?.addEventListener('abort', cancel, { once: true });
    if (request.signal?.aborted) controller.abort();
    let stalled = false;
    let idleTimer: NodeJS.Timeout | undefined;
    const armIdleTimer = () => {
      clearTimeout(idleTimer);
      idleTimer = setTimeout(() => {
        stalled = true;
        controller.abort();
      }, this.options.timeoutMs);
    };
    let callbackError: { error: unknown } | undefined;

    try {
      const stream = await open(controller.signal);
      armIdleTimer();
      // The SDK ends iteration quietly when the signal aborts, so cancellation and stalls are checked after.
      for await (const event of stream) {
        armIdleTimer();
        for (const delta of assembler.push(event)) {
          try {
            onDelta?.(delta);
          } catch (error) {
            callbackError = { error };
            throw error;
          }
        }
      }
    } catch (error) {
      if (callbackError) throw callbackError.error;
      if (!request.signal?.aborted && !stalled) throw toError(error);
    } finally {
      clearTimeout(idleTimer);
      request.signal?.removeEventListener('abort', cancel);
    }

    if (request.signal?.aborted) return assembler.result('cancelled');
    if (stalled) {
      throw new LlmError(`${this.#endpoint} stopped streaming for ${this.options.timeoutMs} ms.`, {
        retryable: true,
      });
    }
    return complete();
  }

  #cutShort(): LlmError {
    return new LlmError(`${this.#endpoint} ended the stream before the answer was finished.`, {
      retryable: true,
    });
  }

  /** A failure the Responses API reported in the stream (an `error` event, `response.failed`). */
  #responseFailed(failure: ResponseFailure): LlmError {
    const code = failure.code ?? failure.type;
    return new LlmError(`${this.#endpoint} reported an error mid-stream: ${failure.message}`, {
      ...(code !== undefined ? { providerCode: code } : {}),
      // Without a code nothing says it is permanent (as for Chat Completions' in-stream errors).
      retryable: code === undefined || RETRYABLE_RESPONSE_CODES.has(code),
    });
  }

  completeJson<T>(request: CompleteJsonRequest<T>): Promise<T> {
    const responses = this.responsesClient;
    return this.#completeJson(
      request,
      responses
        ? (messages) => this.#jsonByResponse(responses, request, messages)
        : (messages) => this.#jsonByCompletion(request, messages),
    );
  }

  /**
   * The JSON-output loop of either API: ask, refuse a refusal, validate, and on unusable JSON ask once more with
   * the problem named (models usually fix what they are told).
   */
  async #completeJson<T>(
    request: CompleteJsonRequest<T>,
    ask: (messages: ChatMessage[]) => Promise<JsonAnswer>,
  ): Promise<T> {
    const messages: ChatMessage[] = [...request.messages];
    for (let attempt = 0; ; attempt++) {
      const { text, refusal, truncated } = await ask(messages);
      if (refusal) {
        throw new LlmError(`${this.#endpoint} refused to produce "${request.name}": ${refusal}`, {
          retryable: false,
        });
      }
      const parsed = parseJsonOutput(text, request.schema);
      if (parsed.ok) return parsed.value;
      if (attempt >= JSON_REPAIR_ATTEMPTS) {
        const cut = truncated ? ' (the answer was cut at the token limit)' : '';
        throw new LlmError(
          `${this.#endpoint} returned unusable "${request.name}" JSON${cut}: ${parsed.problem}`,
          { retryable: true },
        );
      }
      messages.push(
        { role: 'assistant', content: text },
        { role: 'user', content: `${parsed.problem} Answer again with only the corrected JSON.` },
      );
    }
  }

  async #jsonByCompletion<T>(request: CompleteJsonRequest<T>, messages: ChatMessage[]): Promise<JsonAnswer> {
    const completion = await this.#call(this.#chatModel, () =>
      this.client.chat.completions.create({
        model: this.#chatModel,
        messages: toWireMessages(messages),
        response_format: toJsonSchemaResponseFormat(request.schema, request.name),
        stream: false,
      }),
    );
    // A proxy's HTML page arrives here as a string: the SDK only parses JSON content types.
    if (!Array.isArray((completion as Partial<typeof completion>).choices))
      throw this.#notOpenAiShaped('chat completion');
    const choice = completion.choices[0];
    return {
      text: choice?.message.content ?? '',
      refusal: choice?.message.refusal ?? undefined,
      truncated: choice?.finish_reason === 'length',
    };
  }

  /** JSON output through the Responses API: the same json_schema format, in `text.format`; not streamed. */
  async #jsonByResponse<T>(
    client: OpenAI,
    request: CompleteJsonRequest<T>,
    messages: ChatMessage[],
  ): Promise<JsonAnswer> {
    const { json_schema: format } = toJsonSchemaResponseFormat(request.schema, request.name);
    const { instructions, input } = toResponsesInput(messages);
    const response = await this.#call(this.#chatModel, () =>
      client.responses.create({
        model: this.#chatModel,
        ...(instructions !== undefined ? { instructions } : {}),
        input,
        text: { format: { type: 'json_schema', ...format } },
        store: false,
        stream: false,
      }),
    );
    // A proxy's HTML page arrives here as a string: the SDK only parses JSON content types.
    if (!Array.isArray((response as Partial<typeof response>).output))
      throw this.#notOpenAiShaped('response');
    if (response.status === 'failed')
      throw this.#responseFailed(
        response.error
          ? { code: response.error.code, message: response.error.message }
          : { message: 'The response failed without saying why.' },
      );
    const { text, refusal } = outputOf(response.output);
    return { text, refusal, truncated: response.status === 'incomplete' };
  }

  async embed(texts: string[]): Promise<number[][]> {
    const vectors: number[][] = [];
    for (let start = 0; start < texts.length; start += EMBEDDING_BATCH_SIZE) {
      const batch = texts.slice(start, start + EMBEDDING_BATCH_SIZE);
      // Asking for base64 explicitly makes the SDK hand the payload over untouched; decodeEmbedding then
      // also copes with servers that ignore encoding_format and send floats.
      const response = await this.#call(this.#embeddingModel, () =>
        this.client.embeddings.create({
          model: this.#embeddingModel,
          input: batch,
          encoding_format: 'base64',
        }),
      );
      if (!Array.isArray((response as Partial<typeof response>).data))
        throw this.#notOpenAiShaped('embeddings list');
      const data = [...response.data].sort((a, b) => a.index - b.index);
      if (data.length !== batch.length) {
        throw new LlmError(
          `${this.#endpoint} returned ${data.length} embeddings for ${batch.length} texts.`,
          {
            retryable: true,
          },
        );
      }
      for (const item of data) {
        const vector = decodeEmbedding(item.embedding);
        const expected = this.options.embeddingDimensions;
        if (expected !== undefined && vector.length !== expected)
          throw new LlmError(
            `${this.#endpoint} returned embeddings of ${vector.length} dimensions from "${this.#embeddingModel}"; ` +
              `LLM_EMBEDDING_DIMENSIONS is ${expected}, the length the vector indexes were created with. Use a ` +
              'model (or a dimensions setting of it) that produces that length.',
            { retryable: false },
          );
        vectors.push(vector);
      }
    }
    return vectors;
  }

  async probe(): Promise<{ ok: boolean; detail: string }> {
    let reachable: string;
    try {
      const page = await this.client.models.list({
        maxRetries: 0,
        timeout: Math.min(this.options.timeoutMs, PROBE_TIMEOUT_MS),
      });
      if (!Array.isArray((page as Partial<typeof page>).data)) throw this.#notOpenAiShaped('models list');
      const ids = page.data.map((model) => model.id);
      if (this.connection.kind === 'azure-openai') {
        reachable = `${this.#endpoint} is reachable (${ids.length} models available).`;
      } else {
        const listed = ids.includes(this.#chatModel) ? 'is listed' : 'is not listed (it may still resolve)';
        reachable = `${this.#endpoint} is reachable; chat model "${this.#chatModel}" ${listed}.`;
      }
    } catch (error) {
      return { ok: false, detail: toLlmError(error, this.#errorContext(this.#chatModel)).message };
    }
    const route = await this.#probeRoute();
    return route === undefined ? { ok: true, detail: reachable } : { ok: false, detail: route };
  }

  /**
   * Whether the route chat turns use exists: a server can list its models and still lack `/responses` (or
   * `/chat/completions`). The probe posts a body without the input every server requires, so a server with the
   * route refuses it (400/422) without generating anything, while one without it answers 404 (or 405). On Azure's
   * deployments route the chat deployment is named, so a missing deployment is a 404 too.
   */
  async #probeRoute(): Promise<string | undefined> {
    const responses = this.responsesClient;
    const path = responses ? '/responses' : '/chat/completions';
    const api = responses ? 'LLM_API=responses' : 'LLM_API=chat-completions';
    try {
      await (responses ?? this.client).post(path, {
        body: responses ? {} : { model: this.#chatModel },
        maxRetries: 0,
        timeout: Math.min(this.options.timeoutMs, PROBE_TIMEOUT_MS),
      });
      return undefined;
    } catch (error) {
      if (error instanceof APIError && (error.status === 400 || error.status === 422)) return undefined;
      if (error instanceof APIError && (error.status === 404 || error.status === 405))
        return (
          `${this.#endpoint} has no ${path} route (POST answered ${error.status}), which ${api} calls on every ` +
          'turn: ' +
          (responses
            ? 'use a server with the Responses API or set LLM_API=chat-completions.'
            : 'check the base URL (and on Azure the chat deployment name).')
        );
      return `${api}: ${toLlmError(error, this.#errorContext(this.#chatModel)).message}`;
    }
  }

  async #call<T>(model: string, request: () => Promise<T>): Promise<T> {
    try {
      return await request();
    } catch (error) {
      throw toLlmError(error, this.#errorContext(model));
    }
  }

  #notOpenAiShaped(what: string): LlmError {
    return new LlmError(`${this.#endpoint} did not answer with an OpenAI-style ${what}; check the URL.`, {
      retryable: false,
    });
  }

  #errorContext(model: string): LlmErrorContext {
    return { endpoint: this.#endpoint, model, kind: this.connection.kind, timeoutMs: this.options.timeoutMs };
  }
}

/** The text and refusal of a non-streamed response's message items. */
function outputOf(output: readonly OpenAI.Responses.ResponseOutputItem[]): { text: string; refusal: string } {
  let text = '';
  let refusal = '';
  for (const item of output) {
    if (item.type !== 'message') continue;
    for (const part of item.content) {
      if (part.type === 'output_text') text += part.text;
      else if (part.type === 'refusal') refusal += part.refusal;
    }
  }
  return { text, refusal };
}

/**
 * An error event the SDK threw while reading the stream: an APIError without a status, other than the SDK's own
 * connection, timeout and abort errors (subclasses without a status too).
 */
function isInBandError(error: unknown): error is APIError {
  return (
    error instanceof APIError &&
    error.status === undefined &&
    !(error instanceof APIConnectionError) &&
    !(error instanceof APIUserAbortError)
  );
}

/** The details of an in-band error the SDK threw (it hands over the event's `error` object as `error`). */
function failureOf(error: {
  error: unknown;
  code: string | null | undefined;
  message: string;
}): ResponseFailure {
  const body = error.error as Record<string, unknown> | undefined;
  const message = body?.['message'];
  const type = body?.['type'];
  const failure: ResponseFailure = {
    message: typeof message === 'string' && message !== '' ? message : error.message,
  };
  if (error.code !== null && error.code !== undefined) failure.code = String(error.code);
  if (typeof type === 'string' && type !== '') failure.type = type;
  return failure;
}
