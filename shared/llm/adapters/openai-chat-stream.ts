// Chat turns streamed through Chat Completions or the Responses API, both through one loop that carries the
// caller's cancellation and an idle timeout into the SDK and tells a finished answer from a cut one.
import type OpenAI from 'openai';
import { ChatStreamAssembler } from '../chat-stream-assembler.js';
import { LlmError, type LlmDelta, type LlmReply, type StreamChatRequest } from '../llm-gateway.js';
import { ResponsesStreamAssembler } from '../responses-stream-assembler.js';
import { maxTokensField, toWireMessages, toWireTools } from './openai-chat-request.js';
import { errorContext, type OpenAiEndpoint } from './openai-endpoint.js';
import { toLlmError } from './openai-errors.js';
import { failureOf, isInBandError, responseFailed } from './openai-response-failure.js';
import {
  MIN_MAX_OUTPUT_TOKENS,
  toResponsesInput,
  toResponsesReasoning,
  toResponsesTools,
} from './openai-responses-request.js';

/** What both stream assemblers offer the one streaming loop. */
interface StreamAssembler {
  push(event: unknown): LlmDelta[];
  readonly finished: boolean;
  result(finishReason?: string): LlmReply;
}

/** What one API gives the streaming loop: its assembler, how to open the stream, and how to read its end. */
interface ApiStream {
  assembler: StreamAssembler;
  open: (signal: AbortSignal) => Promise<AsyncIterable<unknown>>;
  toError: (error: unknown) => LlmError;
  /** The reply once the stream ended without cancellation or stall; throws when it ended unfinished. */
  complete: () => LlmReply;
}

export function streamChat(
  endpoint: OpenAiEndpoint,
  request: StreamChatRequest,
  onDelta?: (delta: LlmDelta) => void,
): Promise<LlmReply> {
  // A turn may name another model of the catalogue: another deployment behind the same endpoint.
  const target = request.model === undefined ? endpoint : { ...endpoint, chatModel: request.model };
  const responses = target.responsesClient;
  return responses
    ? streamResponse(target, responses, request, onDelta)
    : streamCompletion(target, request, onDelta);
}

function streamCompletion(
  endpoint: OpenAiEndpoint,
  request: StreamChatRequest,
  onDelta?: (delta: LlmDelta) => void,
): Promise<LlmReply> {
  const assembler = new ChatStreamAssembler();
  const { connection } = endpoint;
  const effort = connection.reasoningEffort;
  return stream(endpoint, request, onDelta, {
    assembler,
    open: (signal) =>
      endpoint.client.chat.completions.create(
        {
          model: endpoint.chatModel,
          messages: toWireMessages(request.messages),
          stream: true,
          stream_options: { include_usage: true },
          ...(request.tools && request.tools.length > 0
            ? { tools: toWireTools(request.tools), tool_choice: request.toolChoice ?? 'auto' }
            : {}),
          ...(request.maxTokens !== undefined ? maxTokensField(connection, request.maxTokens) : {}),
          ...(effort !== undefined ? { reasoning_effort: effort } : {}),
        },
        { signal },
      ),
    toError: (error) => toLlmError(error, errorContext(endpoint, endpoint.chatModel)),
    complete: () => {
      // Without [DONE] or a finish_reason the connection was cut: a partial answer must not pass as complete.
      if (!assembler.finished) throw cutShort(endpoint);
      return assembler.result();
    },
  });
}

function streamResponse(
  endpoint: OpenAiEndpoint,
  client: OpenAI,
  request: StreamChatRequest,
  onDelta?: (delta: LlmDelta) => void,
): Promise<LlmReply> {
  const assembler = new ResponsesStreamAssembler();
  const { instructions, input } = toResponsesInput(request.messages);
  const reasoning = toResponsesReasoning(
    endpoint.connection.reasoningEffort,
    endpoint.connection.reasoningSummary,
  );
  return stream(endpoint, request, onDelta, {
    assembler,
    open: (signal) =>
      client.responses.create(
        {
          model: endpoint.chatModel,
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
    toError: (error) =>
      // The SDK throws on an `error` event whose details are nested under `error` (the wire's shape); one with
      // them at the top level reaches the assembler instead. Both are the provider's in-band failure.
      isInBandError(error)
        ? responseFailed(endpoint.name, failureOf(error))
        : toLlmError(error, errorContext(endpoint, endpoint.chatModel)),
    complete: () => {
      if (assembler.failure) throw responseFailed(endpoint.name, assembler.failure);
      if (!assembler.finished) throw cutShort(endpoint);
      return assembler.result();
    },
  });
}

/**
 * The one streaming loop: the caller's cancellation and an idle timeout abort the request; cancellation
 * resolves with what arrived (finish reason `cancelled`), a stall or a broken stream rejects with an LlmError,
 * an exception from onDelta escapes unchanged.
 */
async function stream(
  endpoint: OpenAiEndpoint,
  request: StreamChatRequest,
  onDelta: ((delta: LlmDelta) => void) | undefined,
  { assembler, open, toError, complete }: ApiStream,
): Promise<LlmReply> {
  const { timeoutMs } = endpoint.options;
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
    }, timeoutMs);
  };
  let callbackError: { error: unknown } | undefined;

  try {
    const events = await open(controller.signal);
    armIdleTimer();
    // The SDK ends iteration quietly when the signal aborts, so cancellation and stalls are checked after.
    for await (const event of events) {
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
    throw new LlmError(`${endpoint.name} stopped streaming for ${timeoutMs} ms.`, { retryable: true });
  }
  return complete();
}

function cutShort(endpoint: OpenAiEndpoint): LlmError {
  return new LlmError(`${endpoint.name} ended the stream before the answer was finished.`, {
    retryable: true,
  });
}
