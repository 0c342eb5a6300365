// The offline model: a deterministic STAND-IN for an LLM (not a language model), served as an
// OpenAI-compatible HTTP API so the local runtime runs the real openai client and stream parsing unchanged.
// Its rules, applied to the request's messages, are in local/offline-model/README.md.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import type { z } from 'zod';
import {
  completionBody,
  pacedTokenCount,
  streamEvents,
  tokenizeReply,
  type CompletionMeta,
  type StreamEvent,
} from './completion-chunks.js';
import { readRequestBody, TOO_LARGE } from '../http/request-body.js';
import { encodeFloat32Base64, fnv1a, hashedEmbedding } from './hashed-embedding.js';
import { planReply } from './reply-rules.js';
import {
  chatCompletionRequest,
  embeddingRequest,
  messageText,
  type ChatCompletionRequest,
} from './request-schema.js';
import { responseEvents, responseObject, tokenizeResponse, type ResponseMeta } from './response-events.js';
import {
  responsesRequest,
  toChatCompletionRequest,
  wantsReasoningSummary,
  type ResponsesRequest,
} from './responses-request.js';
import { countTokens } from './text-tokens.js';
import { NO_VOCABULARY, type OfflineModelVocabulary } from './vocabulary.js';

export const OFFLINE_CHAT_MODEL = 'offline-stand-in';
export const OFFLINE_EMBEDDING_MODEL = 'offline-stand-in-embedding';

export interface OfflineModelOptions {
  /** Where the API is mounted, e.g. '/offline-model/v1'. */
  pathPrefix: string;
  /** Wait before the first token. Default 0. */
  ttftMs?: number;
  /** Draws each request's wait before its first token instead (the Azure latency model's model.first-token). */
  firstTokenMs?: (request: ChatCompletionRequest) => number;
  /** Pace of streamed tokens; 0 = as fast as possible. Default 0. */
  tokensPerSecond?: number;
  /** Length of embedding vectors unless a request asks for `dimensions`. Default 256. */
  embeddingDimensions?: number;
  /**
   * The app's format and tool names that the stand-in rules answer, and how its search reads words (the local
   * runtime hands in the product's). Default: none, so only the generic rules apply and words are not stemmed.
   */
  vocabulary?: OfflineModelVocabulary;
}

export interface OfflineModel {
  /** Serves a request under the prefix; resolves false (untouched) for any other path. */
  handleRequest(req: IncomingMessage, res: ServerResponse): Promise<boolean>;
}

const MAX_BODY_BYTES = 4 * 1024 * 1024;

class OpenAiStyleError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly param: string | null = null,
    readonly type = 'invalid_request_error',
  ) {
    super(message);
  }
}

export function createOfflineModel(options: OfflineModelOptions): OfflineModel {
  const prefix = options.pathPrefix.replace(/\/+$/, '');
  const pacing = {
    ttftMs: Math.max(0, options.ttftMs ?? 0),
    tokenIntervalMs: (options.tokensPerSecond ?? 0) > 0 ? 1000 / (options.tokensPerSecond ?? 1) : 0,
  };
  const firstTokenMs = options.firstTokenMs ?? ((): number => pacing.ttftMs);
  const embeddingDimensions = options.embeddingDimensions ?? 256;
  const vocabulary = options.vocabulary ?? NO_VOCABULARY;

  async function route(req: IncomingMessage, res: ServerResponse, path: string): Promise<void> {
    const method = req.method ?? 'GET';
    if (path === '/models' || path.startsWith('/models/')) {
      if (method !== 'GET') throw new OpenAiStyleError(405, `Use GET for ${prefix}${path}.`);
      const id = path === '/models' ? undefined : decodeURIComponent(path.slice('/models/'.length));
      if (id === undefined) return sendJson(res, 200, { object: 'list', data: modelList() });
      const model = modelList().find((m) => m.id === id);
      if (!model) throw new OpenAiStyleError(404, `The model '${id}' does not exist.`, 'model');
      return sendJson(res, 200, model);
    }
    if (path === '/chat/completions') {
      if (method !== 'POST') throw new OpenAiStyleError(405, `Use POST for ${prefix}${path}.`);
      return chatCompletions(req, res, parse(chatCompletionRequest, await readJson(req)));
    }
    if (path === '/responses') {
      if (method !== 'POST') throw new OpenAiStyleError(405, `Use POST for ${prefix}${path}.`);
      return responses(res, parse(responsesRequest, await readJson(req)));
    }
    if (path === '/embeddings') {
      if (method !== 'POST') throw new OpenAiStyleError(405, `Use POST for ${prefix}${path}.`);
      const body = parse(embeddingRequest, await readJson(req));
      const inputs = typeof body.input === 'string' ? [body.input] : body.input;
      const dimensions = body.dimensions ?? embeddingDimensions;
      const data = inputs.map((text, index) => {
        const vector = hashedEmbedding(text, dimensions, vocabulary.text);
        return {
          object: 'embedding',
          index,
          embedding: body.encoding_format === 'base64' ? encodeFloat32Base64(vector) : vector,
        };
      });
      const tokens = inputs.reduce((n, text) => n + countTokens(text), 0);
      return sendJson(res, 200, {
        object: 'list',
        data,
        model: body.model,
        usage: { prompt_tokens: tokens, total_tokens: tokens },
      });
    }
    throw new OpenAiStyleError(404, `Unknown offline-model route: ${method} ${prefix}${path}.`);
  }

  async function chatCompletions(req: IncomingMessage, res: ServerResponse, request: ChatCompletionRequest) {
    const firstTokenAt = performance.now() + firstTokenMs(request);
    const plan = planReply(request, vocabulary);
    const requestHash = fnv1a(JSON.stringify(request.messages));
    const meta: CompletionMeta = {
      id: `chatcmpl-offline-${stableId(`${requestHash}`, 20)}`,
      created: Math.floor(Date.now() / 1000),
      model: request.model,
      promptTokens: request.messages.reduce((n, m) => n + countTokens(messageText(m)) + 3, 0),
      toolCallIds: plan.toolCalls.map((_, i) => `call_${stableId(`${requestHash}:${i}`, 24)}`),
      includeUsage: request.stream_options?.include_usage === true,
    };
    const maxTokens = request.max_completion_tokens ?? request.max_tokens;
    if (maxTokens != null) meta.maxTokens = maxTokens;
    const reply = tokenizeReply(plan, meta);

    // A client that goes away stops the pacing at once.
    const gone = new AbortController();
    res.once('close', () => gone.abort());

    if (request.stream !== true) {
      const tokens = pacedTokenCount(reply);
      if (tokens > 0) await waitUntil(firstTokenAt + (tokens - 1) * pacing.tokenIntervalMs, gone.signal);
      return sendJson(res, 200, completionBody(reply, meta));
    }
    res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache',
      'x-offline-model': 'stand-in',
    });
    res.flushHeaders();
    await writeStream(res, streamEvents(reply, meta), firstTokenAt, gone.signal);
  }

  /** The Responses API: the same reply rules as chat completions, rendered as response events or a response. */
  async function responses(res: ServerResponse, request: ResponsesRequest) {
    const started = performance.now();
    const chatRequest = toChatCompletionRequest(request);
    if (chatRequest === undefined) throw new OpenAiStyleError(400, 'The input holds no message.', 'input');
    const firstTokenAt = started + firstTokenMs(chatRequest);
    const plan = planReply(chatRequest, vocabulary);
    const requestHash = fnv1a(JSON.stringify([request.instructions ?? null, request.input]));
    const meta: ResponseMeta = {
      id: `resp_offline${stableId(`${requestHash}`, 24)}`,
      createdAt: Math.floor(Date.now() / 1000),
      model: request.model,
      promptTokens: chatRequest.messages.reduce((n, m) => n + countTokens(messageText(m)) + 3, 0),
      toolCallIds: plan.toolCalls.map((_, i) => `call_${stableId(`${requestHash}:${i}`, 24)}`),
      summarize: wantsReasoningSummary(request),
      ...(request.max_output_tokens != null ? { maxOutputTokens: request.max_output_tokens } : {}),
    };
    const response = tokenizeResponse(plan, meta);
    const events = responseEvents(response, meta);

    const gone = new AbortController();
    res.once('close', () => gone.abort());
    if (request.stream !== true) {
      const tokens = events.filter((event) => event.paced).length;
      if (tokens > 0) await waitUntil(firstTokenAt + (tokens - 1) * pacing.tokenIntervalMs, gone.signal);
      return sendJson(res, 200, responseObject(response, meta));
    }
    res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache',
      'x-offline-model': 'stand-in',
    });
    res.flushHeaders();
    // Each event is named twice, as OpenAI sends it: an `event:` line and the `type` in its data; no [DONE].
    await writeStream(
      res,
      events,
      firstTokenAt,
      gone.signal,
      (event) => `event: ${String(event['type'])}\n`,
      '',
    );
  }

  async function writeStream(
    res: ServerResponse,
    events: StreamEvent[],
    firstTokenAt: number,
    gone: AbortSignal,
    eventLine: (chunk: Record<string, unknown>) => string = () => '',
    end = 'data: [DONE]\n\n',
  ) {
    let pacedIndex = 0;
    for (const event of events) {
      if (event.paced) {
        await waitUntil(firstTokenAt + pacedIndex * pacing.tokenIntervalMs, gone);
        pacedIndex++;
      }
      if (gone.aborted) return;
      if (!res.write(`${eventLine(event.chunk)}data: ${JSON.stringify(event.chunk)}\n\n`))
        await drained(res, gone);
    }
    if (!gone.aborted) res.end(end);
  }

  function modelList() {
    const owned_by = 'offline-model (deterministic stand-in, not an LLM)';
    return [
      { id: OFFLINE_CHAT_MODEL, object: 'model', created: 0, owned_by },
      { id: OFFLINE_EMBEDDING_MODEL, object: 'model', created: 0, owned_by },
    ];
  }

  return {
    async handleRequest(req, res) {
      const path = new URL(req.url ?? '/', 'http://offline.local').pathname;
      if (path !== prefix && !path.startsWith(`${prefix}/`)) return false;
      try {
        await route(req, res, path.slice(prefix.length));
      } catch (error) {
        const failure =
          error instanceof OpenAiStyleError
            ? error
            : new OpenAiStyleError(
                500,
                `The offline model failed: ${(error as Error).message}`,
                null,
                'server_error',
              );
        if (res.headersSent) res.destroy();
        else sendJson(res, failure.status, errorBody(failure));
      }
      return true;
    },
  };
}

function errorBody(error: OpenAiStyleError) {
  return { error: { message: error.message, type: error.type, param: error.param, code: null } };
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(text),
    'x-offline-model': 'stand-in',
  });
  res.end(text);
}

async function readJson(req: IncomingMessage): Promise<unknown> {
  const body = await readRequestBody(req, MAX_BODY_BYTES);
  if (body === TOO_LARGE)
    throw new OpenAiStyleError(413, `The request body exceeds ${MAX_BODY_BYTES} bytes.`);
  try {
    return JSON.parse(body.toString('utf8'));
  } catch {
    throw new OpenAiStyleError(400, 'The request body is not valid JSON.');
  }
}

function parse<T>(schema: z.ZodType<T>, body: unknown): T {
  const result = schema.safeParse(body);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  const param = issue && issue.path.length > 0 ? issue.path.join('.') : null;
  throw new OpenAiStyleError(
    400,
    `Invalid request: ${param ? `${param}: ` : ''}${issue?.message ?? 'malformed'}`,
    param,
  );
}

async function waitUntil(deadline: number, signal: AbortSignal): Promise<void> {
  const delay = deadline - performance.now();
  if (delay <= 0 || signal.aborted) return;
  await sleep(delay, undefined, { signal }).catch(() => undefined);
}

function drained(res: ServerResponse, gone: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      res.off('drain', done);
      gone.removeEventListener('abort', done);
      resolve();
    };
    res.once('drain', done);
    gone.addEventListener('abort', done, { once: true });
  });
}

/** A deterministic id of base-62 characters derived from a seed, like OpenAI's `call_` + 24 characters. */
function stableId(seed: string, length: number): string {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
  let id = '';
  for (let i = 0; id.length < length; i++) {
    let hash = fnv1a(`${seed}#${i}`);
    for (let k = 0; k < 4 && id.length < length; k++) {
      id += alphabet[hash % 62];
      hash = Math.floor(hash / 62);
    }
  }
  return id;
}
