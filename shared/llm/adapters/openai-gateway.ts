// The LLM adapter: one LlmGateway over the real openai SDK for OpenAI, Azure OpenAI, Ollama, vLLM,
// llama.cpp and the local offline model. Retries (429/5xx, retry-after-ms / retry-after) are the SDK's own.
import type OpenAI from 'openai';
import { ChatStreamAssembler } from '../chat-stream-assembler.js';
import { decodeEmbedding } from '../embedding-decoding.js';
import { parseJsonOutput, toJsonSchemaResponseFormat } from '../json-output.js';
import {
  LlmError,
  type CompleteJsonRequest,
  type LlmConnection,
  type LlmDelta,
  type LlmGateway,
  type LlmGatewayOptions,
  type LlmReply,
  type StreamChatRequest,
} from '../llm-gateway.js';
import { maxTokensField, toWireMessages, toWireTools } from './openai-chat-request.js';
import { createOpenAiClient } from './openai-client-factory.js';
import { toLlmError, type LlmErrorContext } from './openai-errors.js';

/** One corrective turn when JSON output fails validation: models usually fix what they are told. */
const JSON_REPAIR_ATTEMPTS = 1;
/** Stays well under every provider's per-request input limit (OpenAI: 2048). */
const EMBEDDING_BATCH_SIZE = 256;
const PROBE_TIMEOUT_MS = 5_000;

/** Throws an LlmError naming the problem when the connection cannot make a client (e.g. no api version). */
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
  return new OpenAiGateway(connection, options, client);
}

class OpenAiGateway implements LlmGateway {
  readonly #chatModel: string;
  readonly #embeddingModel: string;
  readonly #endpoint: string;

  constructor(
    private readonly connection: LlmConnection,
    private readonly options: LlmGatewayOptions,
    private readonly client: OpenAI,
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

  async streamChat(request: StreamChatRequest, onDelta?: (delta: LlmDelta) => void): Promise<LlmReply> {
    const assembler = new ChatStreamAssembler();
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
      const stream = await this.client.chat.completions.create(
        {
          model: this.#chatModel,
          messages: toWireMessages(request.messages),
          stream: true,
          stream_options: { include_usage: true },
          ...(request.tools && request.tools.length > 0
            ? { tools: toWireTools(request.tools), tool_choice: request.toolChoice ?? 'auto' }
            : {}),
          ...(request.maxTokens !== undefined ? maxTokensField(this.connection, request.maxTokens) : {}),
        },
        { signal: controller.signal },
      );
      armIdleTimer();
      // The SDK ends iteration quietly when the signal aborts, so cancellation and stalls are checked after.
      for await (const chunk of stream) {
        armIdleTimer();
        for (const delta of assembler.push(chunk)) {
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
      if (!request.signal?.aborted && !stalled) throw toLlmError(error, this.#errorContext(this.#chatModel));
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
    if (!assembler.finished) {
      // Without [DONE] or a finish_reason the connection was cut: a partial answer must not pass as complete.
      throw new LlmError(`${this.#endpoint} ended the stream before the answer was finished.`, {
        retryable: true,
      });
    }
    return assembler.result();
  }

  async completeJson<T>(request: CompleteJsonRequest<T>): Promise<T> {
    const responseFormat = toJsonSchemaResponseFormat(request.schema, request.name);
    const messages = toWireMessages(request.messages);
    for (let attempt = 0; ; attempt++) {
      const completion = await this.#call(this.#chatModel, () =>
        this.client.chat.completions.create({
          model: this.#chatModel,
          messages,
          response_format: responseFormat,
          stream: false,
        }),
      );
      // A proxy's HTML page arrives here as a string: the SDK only parses JSON content types.
      if (!Array.isArray((completion as Partial<typeof completion>).choices))
        throw this.#notOpenAiShaped('chat completion');
      const choice = completion.choices[0];
      const refusal = choice?.message.refusal;
      if (refusal) {
        throw new LlmError(`${this.#endpoint} refused to produce "${request.name}": ${refusal}`, {
          retryable: false,
        });
      }
      const content = choice?.message.content ?? '';
      const parsed = parseJsonOutput(content, request.schema);
      if (parsed.ok) return parsed.value;
      if (attempt >= JSON_REPAIR_ATTEMPTS) {
        const truncated =
          choice?.finish_reason === 'length' ? ' (the answer was cut at the token limit)' : '';
        throw new LlmError(
          `${this.#endpoint} returned unusable "${request.name}" JSON${truncated}: ${parsed.problem}`,
          {
            retryable: true,
          },
        );
      }
      messages.push(
        { role: 'assistant', content },
        { role: 'user', content: `${parsed.problem} Answer again with only the corrected JSON.` },
      );
    }
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
    try {
      const page = await this.client.models.list({
        maxRetries: 0,
        timeout: Math.min(this.options.timeoutMs, PROBE_TIMEOUT_MS),
      });
      if (!Array.isArray((page as Partial<typeof page>).data)) throw this.#notOpenAiShaped('models list');
      const ids = page.data.map((model) => model.id);
      if (this.connection.kind === 'azure-openai') {
        return { ok: true, detail: `${this.#endpoint} is reachable (${ids.length} models available).` };
      }
      const listed = ids.includes(this.#chatModel) ? 'is listed' : 'is not listed (it may still resolve)';
      return {
        ok: true,
        detail: `${this.#endpoint} is reachable; chat model "${this.#chatModel}" ${listed}.`,
      };
    } catch (error) {
      return { ok: false, detail: toLlmError(error, this.#errorContext(this.#chatModel)).message };
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
