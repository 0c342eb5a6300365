// A tiny OpenAI-compatible model for end-to-end tests: each request answers with what the test's script
// returns, in the real Chat Completions (or, with `{ api: 'responses' }`, Responses API) format, and every
// body is recorded.
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach } from 'vitest';
import { encodeFloat32Base64, hashedEmbedding } from '../../local/offline-model/hashed-embedding.js';
import {
  responsesRequest,
  toChatCompletionRequest,
  type ResponsesRequest,
} from '../../local/offline-model/responses-request.js';
import { createLlmGateway } from '../../shared/llm/adapters/openai-gateway.js';
import type { LlmApi, LlmGateway } from '../../shared/llm/llm-gateway.js';

/** A message of a recorded request, as the Chat Completions API names its fields. */
export interface WireMessage {
  role: 'system' | 'user' | 'assistant' | 'tool';
  content?: string | null;
  tool_calls?: { id: string; type: 'function'; function: { name: string; arguments: string } }[];
  tool_call_id?: string;
}

/** The fields of a chat completion request the tests look at. */
export interface ChatCompletionRequest {
  model: string;
  messages: WireMessage[];
  stream?: boolean;
  stream_options?: { include_usage?: boolean };
  tools?: { type: 'function'; function: { name: string } }[];
  tool_choice?: unknown;
  /** Structured output: `{ type: 'json_schema', json_schema: { name, schema, strict } }`. */
  response_format?: { type: string; json_schema?: { name: string; schema?: unknown; strict?: boolean } };
}

export interface ScriptedReply {
  reasoning?: string;
  /**
   * The Responses API's reasoning summary, part by part (default: `reasoning` as one part). Streamed only when the
   * request asks for a summary (`reasoning.summary`), as OpenAI does; its tokens are counted either way.
   */
  reasoningParts?: string[];
  /** Input tokens the Responses API reports as read from its prompt cache (`cached_tokens`); default 0. */
  cachedTokens?: number;
  /**
   * Chat Completions only: the usage chunk's `usage` as the provider sends it (default: 10 prompt tokens, one
   * completion token a chunk), e.g. with `completion_tokens_details.reasoning_tokens`.
   */
  usage?: Record<string, unknown>;
  content?: string;
  /** `arguments` is the JSON text the model "produces". */
  toolCalls?: { name: string; arguments: string }[];
  /**
   * Cut the connection after this many chunks, as a provider (or the network) dropping a stream does; a
   * non-streamed answer is cut before it is sent.
   */
  breakAfterChunks?: number;
  /**
   * Streams this many chunks, then waits for `until` before the rest, as a model thinking between tokens: a test
   * acts while the answer is open (0: before the first token). The rest is not sent if the client went away. A
   * non-streamed answer (Chat Completions) is held whole.
   */
  hold?: { afterChunks: number; until: Promise<unknown> };
}

/** What to answer; `call` counts every chat completion request the server received, from 0. */
export type Script = (request: ChatCompletionRequest, call: number) => ScriptedReply;

export interface ScriptedModel {
  /** Ends in /v1, as an OpenAI client's baseURL. */
  baseUrl: string;
  /** Every chat request, in arrival order (a Responses request as the chat completion request it stands for). */
  requests: ChatCompletionRequest[];
  /** Every Responses API request body as it was sent, in arrival order (empty unless it speaks that API). */
  responsesRequests: ResponsesRequest[];
  /** The inputs of every embeddings request, in arrival order. */
  embeddingRequests: string[][];
  /** App settings that point the product at this model. */
  settings: Record<string, string>;
  close(): Promise<void>;
}

/**
 * The length of the embeddings it answers with (hashed bag-of-words vectors, as the offline model's: texts that
 * share words are near), and the product's default LLM_EMBEDDING_DIMENSIONS.
 */
export const SCRIPTED_EMBEDDING_DIMENSIONS = 1536;

export const SCRIPTED_MODEL = 'scripted-model';

/**
 * The embedding of a text a test chooses (SCRIPTED_EMBEDDING_DIMENSIONS numbers); undefined: the hashed bag of
 * words.
 */
export type ScriptedEmbedding = (text: string) => number[] | undefined;

export async function startScriptedModel(
  script: Script,
  options: { api?: LlmApi; embed?: ScriptedEmbedding } = {},
): Promise<ScriptedModel> {
  const api = options.api ?? 'chat-completions';
  const requests: ChatCompletionRequest[] = [];
  const responsesRequests: ResponsesRequest[] = [];
  const embeddingRequests: string[][] = [];
  const state: ServerState = { script, api, requests, responsesRequests, embeddingRequests };
  if (options.embed !== undefined) state.embed = options.embed;
  const server = createServer((request, response) => {
    handle(request, response, state).catch((error: unknown) => {
      if (!response.headersSent) sendJson(response, 500, { error: { message: String(error) } });
      else response.destroy();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const baseUrl = `http://127.0.0.1:${port}/v1`;
  return {
    baseUrl,
    requests,
    responsesRequests,
    embeddingRequests,
    settings: {
      LLM_PROVIDER: 'openai-compatible',
      LLM_API: api,
      LLM_BASE_URL: baseUrl,
      LLM_CHAT_MODEL: SCRIPTED_MODEL,
      LLM_EMBEDDING_MODEL: `${SCRIPTED_MODEL}-embedding`,
      LLM_EMBEDDING_DIMENSIONS: String(SCRIPTED_EMBEDDING_DIMENSIONS),
      // A scripted answer is never worth a retry: every request the product makes is one the test counts.
      LLM_MAX_RETRIES: '0',
    },
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((error) => (error ? reject(error) : resolve()));
      }),
  };
}

/** A real OpenAI gateway in front of a scripted model, for a test file's calls; see useScriptedGateway. */
export interface ScriptedGateway {
  /** The answers to the next requests, in order (then "no reply scripted"); emptied before each test. */
  replies: ScriptedReply[];
  readonly gateway: LlmGateway;
  /** The requests of the current test, in arrival order. */
  readonly requests: ChatCompletionRequest[];
}

/**
 * Registers the file's hooks: a scripted model answering with `replies` started before all tests and closed after
 * them, a gateway to it without retries, and replies and requests emptied before each test.
 */
export function useScriptedGateway(): ScriptedGateway {
  let model: ScriptedModel;
  let gateway: LlmGateway;
  const scripted: ScriptedGateway = {
    replies: [],
    get gateway() {
      return gateway;
    },
    get requests() {
      return model.requests;
    },
  };
  beforeAll(async () => {
    model = await startScriptedModel(
      (_request, call) => scripted.replies[call] ?? { content: 'no reply scripted' },
    );
    gateway = createLlmGateway(
      { kind: 'openai-compatible', baseUrl: model.baseUrl, chatModel: 'scripted-model', embeddingModel: 'e' },
      { maxRetries: 0, timeoutMs: 5_000 },
    );
  });
  afterAll(() => model.close());
  beforeEach(() => {
    scripted.replies = [];
    model.requests.length = 0;
  });
  return scripted;
}

/** The JSON input a structured-output request carries as its last message ({} when there is none). */
export const inputOf = (request: ChatCompletionRequest | undefined) =>
  JSON.parse(request?.messages.at(-1)?.content ?? '{}') as Record<string, unknown>;

interface ServerState {
  script: Script;
  api: LlmApi;
  requests: ChatCompletionRequest[];
  responsesRequests: ResponsesRequest[];
  embeddingRequests: string[][];
  embed?: ScriptedEmbedding;
}

async function handle(request: IncomingMessage, response: ServerResponse, state: ServerState): Promise<void> {
  const { script, api, requests } = state;
  const path = new URL(request.url ?? '/', 'http://localhost').pathname;
  if (request.method === 'POST' && path === '/v1/embeddings') {
    const body = JSON.parse(await readBody(request)) as {
      model: string;
      input: string | string[];
      encoding_format?: string;
    };
    const texts = typeof body.input === 'string' ? [body.input] : body.input;
    state.embeddingRequests.push(texts);
    sendJson(response, 200, {
      object: 'list',
      data: texts.map((text, index) => {
        const vector = state.embed?.(text) ?? hashedEmbedding(text, SCRIPTED_EMBEDDING_DIMENSIONS);
        return {
          object: 'embedding',
          index,
          embedding: body.encoding_format === 'base64' ? encodeFloat32Base64(vector) : vector,
        };
      }),
      model: body.model,
      usage: { prompt_tokens: texts.length, total_tokens: texts.length },
    });
    return;
  }
  if (request.method === 'GET' && path === '/v1/models') {
    sendJson(response, 200, {
      object: 'list',
      data: [{ id: SCRIPTED_MODEL, object: 'model', created: 0, owned_by: 'end-to-end tests' }],
    });
    return;
  }
  const route = api === 'responses' ? '/v1/responses' : '/v1/chat/completions';
  if (request.method !== 'POST' || path !== route) {
    sendJson(response, 404, {
      error: { message: `No route ${request.method} ${path} (this model speaks ${api})`, type: 'not_found' },
    });
    return;
  }
  if (api === 'responses') {
    const raw = responsesRequest.parse(JSON.parse(await readBody(request)));
    const view = toChatCompletionRequest(raw) as ChatCompletionRequest | undefined;
    if (view === undefined) {
      sendJson(response, 400, { error: { message: 'The input holds no message.', param: 'input' } });
      return;
    }
    const call = requests.length;
    requests.push(view);
    state.responsesRequests.push(raw);
    const reply = script(view, call);
    if (raw.stream === true) streamResponse(response, raw, reply);
    else sendResponse(response, raw, reply);
    return;
  }
  const body = JSON.parse(await readBody(request)) as ChatCompletionRequest;
  const call = requests.length;
  requests.push(body);
  const reply = script(body, call);
  if (body.stream === true) streamReply(response, body, reply);
  else {
    // A held non-streamed answer is sent whole once released (a slow structured-output call).
    if (reply.hold !== undefined) await reply.hold.until;
    if (!response.destroyed) completeReply(response, body, reply);
  }
}

function streamReply(response: ServerResponse, request: ChatCompletionRequest, reply: ScriptedReply): void {
  const id = `chatcmpl-${randomUUID()}`;
  const created = Math.floor(Date.now() / 1000);
  const includeUsage = request.stream_options?.include_usage === true;
  const chunk = (delta: object, finishReason: string | null = null) => ({
    id,
    object: 'chat.completion.chunk',
    created,
    model: request.model,
    choices: [{ index: 0, delta, finish_reason: finishReason }],
    ...(includeUsage ? { usage: null } : {}),
  });
  const toolCalls = reply.toolCalls ?? [];
  const chunks: object[] = [chunk({ role: 'assistant', content: toolCalls.length > 0 ? null : '' })];
  for (const piece of pieces(reply.reasoning)) chunks.push(chunk({ reasoning_content: piece }));
  for (const piece of pieces(reply.content)) chunks.push(chunk({ content: piece }));
  toolCalls.forEach((call, index) => {
    chunks.push(
      chunk({
        tool_calls: [
          {
            index,
            id: `call_${randomUUID()}`,
            type: 'function',
            function: { name: call.name, arguments: '' },
          },
        ],
      }),
    );
    // Arguments arrive in fragments, as OpenAI sends them.
    for (const piece of halves(call.arguments))
      chunks.push(chunk({ tool_calls: [{ index, function: { arguments: piece } }] }));
  });
  chunks.push(chunk({}, toolCalls.length > 0 ? 'tool_calls' : 'stop'));
  if (includeUsage) {
    const completionTokens = chunks.length;
    chunks.push({
      id,
      object: 'chat.completion.chunk',
      created,
      model: request.model,
      choices: [],
      usage: reply.usage ?? {
        prompt_tokens: 10,
        completion_tokens: completionTokens,
        total_tokens: 10 + completionTokens,
      },
    });
  }
  response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  if (reply.breakAfterChunks !== undefined) {
    for (const item of chunks.slice(0, reply.breakAfterChunks))
      response.write(`data: ${JSON.stringify(item)}\n\n`);
    // Let the chunks reach the client before the connection drops.
    setTimeout(() => response.destroy(), 50);
    return;
  }
  if (reply.hold !== undefined) {
    const { afterChunks, until } = reply.hold;
    response.flushHeaders();
    for (const item of chunks.slice(0, afterChunks)) response.write(`data: ${JSON.stringify(item)}\n\n`);
    void until.then(() => {
      if (response.destroyed || response.writableEnded) return;
      for (const item of chunks.slice(afterChunks)) response.write(`data: ${JSON.stringify(item)}\n\n`);
      response.end('data: [DONE]\n\n');
    });
    return;
  }
  for (const item of chunks) response.write(`data: ${JSON.stringify(item)}\n\n`);
  response.end('data: [DONE]\n\n');
}

/** A non-streamed answer: one `chat.completion` object, as OpenAI sends it (structured output asks for these). */
function completeReply(response: ServerResponse, request: ChatCompletionRequest, reply: ScriptedReply): void {
  if (reply.breakAfterChunks !== undefined) {
    response.destroy();
    return;
  }
  const toolCalls = (reply.toolCalls ?? []).map((call) => ({
    id: `call_${randomUUID()}`,
    type: 'function' as const,
    function: { name: call.name, arguments: call.arguments },
  }));
  const completionTokens = pieces(reply.reasoning).length + pieces(reply.content).length + toolCalls.length;
  sendJson(response, 200, {
    id: `chatcmpl-${randomUUID()}`,
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model: request.model,
    choices: [
      {
        index: 0,
        message: {
          role: 'assistant',
          content: toolCalls.length > 0 && !reply.content ? null : (reply.content ?? ''),
          refusal: null,
          ...(reply.reasoning ? { reasoning_content: reply.reasoning } : {}),
          ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}),
        },
        finish_reason: toolCalls.length > 0 ? 'tool_calls' : 'stop',
      },
    ],
    usage: { prompt_tokens: 10, completion_tokens: completionTokens, total_tokens: 10 + completionTokens },
  });
}

// ---- the Responses API wire ------------------------------------------------------------------------------------

/** The output items of a scripted reply, complete, as `output_item.done` and the terminal event show them. */
function responseItems(reply: ScriptedReply, summarize: boolean) {
  const reasoning = summaryParts(reply);
  const calls = (reply.toolCalls ?? []).map((call) => ({
    type: 'function_call' as const,
    id: `fc_${randomUUID().replaceAll('-', '')}`,
    call_id: `call_${randomUUID().replaceAll('-', '').slice(0, 24)}`,
    name: call.name,
    arguments: call.arguments,
    status: 'completed',
  }));
  return {
    reasoning:
      reasoning.length > 0
        ? {
            type: 'reasoning' as const,
            id: `rs_${randomUUID().replaceAll('-', '')}`,
            summary: summarize ? reasoning.map((text) => ({ type: 'summary_text', text })) : [],
          }
        : undefined,
    message:
      reply.content !== undefined && reply.content !== ''
        ? {
            type: 'message' as const,
            id: `msg_${randomUUID().replaceAll('-', '')}`,
            status: 'completed',
            role: 'assistant',
            content: [{ type: 'output_text', annotations: [], logprobs: [], text: reply.content }],
          }
        : undefined,
    calls,
  };
}

function summaryParts(reply: ScriptedReply): string[] {
  return reply.reasoningParts ?? (reply.reasoning ? [reply.reasoning] : []);
}

function responseUsage(reply: ScriptedReply, outputTokens: number) {
  const cached = reply.cachedTokens ?? 0;
  const reasoningTokens = summaryParts(reply).reduce((n, part) => n + pieces(part).length, 0);
  return {
    input_tokens: 10 + cached,
    input_tokens_details: { cached_tokens: cached },
    output_tokens: outputTokens + reasoningTokens,
    output_tokens_details: { reasoning_tokens: reasoningTokens },
    total_tokens: 10 + cached + outputTokens + reasoningTokens,
  };
}

function responseObject(
  request: ResponsesRequest,
  id: string,
  status: string,
  output: object[],
  usage: object | null,
) {
  return {
    id,
    object: 'response',
    created_at: Math.floor(Date.now() / 1000),
    status,
    model: request.model,
    output,
    usage,
  };
}

/**
 * A streamed response as OpenAI sends one: created, in_progress, each item added … done (summary parts, text and
 * arguments in pieces, keyed by item_id), completed; `event:` lines, sequence numbers, no [DONE].
 */
function streamResponse(response: ServerResponse, request: ResponsesRequest, reply: ScriptedReply): void {
  const summarize = request.reasoning?.summary != null;
  const items = responseItems(reply, summarize);
  const id = `resp_${randomUUID().replaceAll('-', '')}`;
  const events: Record<string, unknown>[] = [];
  const emit = (event: Record<string, unknown>) => events.push({ ...event, sequence_number: events.length });
  let deltas = 0;
  const started = responseObject(request, id, 'in_progress', [], null);
  emit({ type: 'response.created', response: started });
  emit({ type: 'response.in_progress', response: started });
  const output: object[] = [];
  const { reasoning, message, calls } = items;
  if (reasoning) {
    const output_index = output.length;
    emit({ type: 'response.output_item.added', output_index, item: { ...reasoning, summary: [] } });
    if (summarize)
      summaryParts(reply).forEach((text, summary_index) => {
        const where = { item_id: reasoning.id, output_index, summary_index };
        emit({
          type: 'response.reasoning_summary_part.added',
          ...where,
          part: { type: 'summary_text', text: '' },
        });
        for (const delta of pieces(text)) {
          emit({ type: 'response.reasoning_summary_text.delta', ...where, delta, obfuscation: 'pad' });
          deltas += 1;
        }
        emit({ type: 'response.reasoning_summary_text.done', ...where, text });
        emit({
          type: 'response.reasoning_summary_part.done',
          ...where,
          part: { type: 'summary_text', text },
        });
      });
    emit({ type: 'response.output_item.done', output_index, item: reasoning });
    output.push(reasoning);
  }
  if (message) {
    const output_index = output.length;
    const text = reply.content ?? '';
    const where = { item_id: message.id, output_index, content_index: 0 };
    emit({
      type: 'response.output_item.added',
      output_index,
      item: { ...message, status: 'in_progress', content: [] },
    });
    emit({
      type: 'response.content_part.added',
      ...where,
      part: { type: 'output_text', annotations: [], text: '' },
    });
    for (const delta of pieces(text)) {
      emit({ type: 'response.output_text.delta', ...where, delta, logprobs: [], obfuscation: 'pad' });
      deltas += 1;
    }
    emit({ type: 'response.output_text.done', ...where, text, logprobs: [] });
    emit({ type: 'response.content_part.done', ...where, part: message.content[0] });
    emit({ type: 'response.output_item.done', output_index, item: message });
    output.push(message);
  }
  for (const call of calls) {
    const output_index = output.length;
    emit({
      type: 'response.output_item.added',
      output_index,
      item: { ...call, arguments: '', status: 'in_progress' },
    });
    // Arguments arrive in fragments that name only the item, as OpenAI sends them.
    for (const delta of halves(call.arguments)) {
      emit({ type: 'response.function_call_arguments.delta', item_id: call.id, output_index, delta });
      deltas += 1;
    }
    emit({
      type: 'response.function_call_arguments.done',
      item_id: call.id,
      output_index,
      arguments: call.arguments,
    });
    emit({ type: 'response.output_item.done', output_index, item: call });
    output.push(call);
  }
  emit({
    type: 'response.completed',
    response: responseObject(request, id, 'completed', output, responseUsage(reply, deltas + calls.length)),
  });

  response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  const frame = (event: Record<string, unknown>) =>
    `event: ${String(event['type'])}\ndata: ${JSON.stringify(event)}\n\n`;
  if (reply.breakAfterChunks !== undefined) {
    for (const event of events.slice(0, reply.breakAfterChunks)) response.write(frame(event));
    setTimeout(() => response.destroy(), 50);
    return;
  }
  response.end(events.map(frame).join(''));
}

/** A non-streamed response (structured output asks for these): one `response` object with its output items. */
function sendResponse(response: ServerResponse, request: ResponsesRequest, reply: ScriptedReply): void {
  if (reply.breakAfterChunks !== undefined) {
    response.destroy();
    return;
  }
  const { reasoning, message, calls } = responseItems(reply, request.reasoning?.summary != null);
  const output = [...(reasoning ? [reasoning] : []), ...(message ? [message] : []), ...calls];
  const tokens = pieces(reply.content).length + calls.length;
  sendJson(
    response,
    200,
    responseObject(request, `resp_${randomUUID()}`, 'completed', output, responseUsage(reply, tokens)),
  );
}

/** A text as token-like deltas: each word with its leading whitespace. */
function pieces(text: string | undefined): string[] {
  return text === undefined || text === '' ? [] : (text.match(/\s*\S+/g) ?? [text]);
}

function halves(text: string): string[] {
  const middle = Math.ceil(text.length / 2);
  return [text.slice(0, middle), text.slice(middle)].filter((piece) => piece !== '');
}

function readBody(request: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    request.on('error', reject);
  });
}

function sendJson(response: ServerResponse, status: number, body: unknown): void {
  response.writeHead(status, { 'content-type': 'application/json' });
  response.end(JSON.stringify(body));
}
