// The OpenAI-compatible API under /api/v1, for the openai SDKs and the tools built on them: the models (the
// catalogue's and the caller's assistants) and chat completions, streamed or not, over the same turn as /api/chat.
import { z } from 'zod';
import type { App } from '../shared/app/app.js';
import { sessionStarter } from '../shared/app/conversation-shaping.js';
import { AppError } from '../shared/errors.js';
import type { EndpointResult } from '../shared/http/endpoint.js';
import { postChatCompletion, type ChatCompletionServices } from '../shared/openai-api/chat-completion.js';
import {
  awaitCompletion,
  completionChunkStream,
  COMPLETION_STREAM_HEADERS,
  keptAliveJson,
  type TurnOutcome,
} from '../shared/openai-api/completion-stream.js';
import {
  chatCompletionChunkSchema,
  chatCompletionRequestSchema,
  chatCompletionSchema,
  OPENAI_BODY_MAX_BYTES,
  openAiHeadersSchema,
  openAiModelListSchema,
  openAiModelSchema,
} from '../shared/openai-api/contracts.js';
import { listModelIds, ModelNotFoundError } from '../shared/openai-api/model-ids.js';
import { parseInput } from '../shared/validation.js';
import type { InvocationContext } from '@azure/functions';
import { frontDoor } from './chat.js';
import type { FunctionDefinition } from './definition.js';
import { endpoint, httpFunction } from './endpoint.js';

/** A non-streamed answer that ends within this long goes out as plain JSON, with its own status. */
const PLAIN_ANSWER_WAIT_MS = 15_000;
/** Past that, a space this often keeps the JSON body's connection alive (Azure's front end cuts it at 230 s idle). */
const JSON_KEEP_ALIVE_MS = 10_000;

export const listOpenAiModelsEndpoint = endpoint({
  name: 'openAiListModels',
  route: 'v1/models',
  methods: ['GET'],
  summary:
    "OpenAI's model list: the catalogue's models the caller may use, then the assistants they can see as `assistant:<assistantId>`.",
  auth: 'caller',
  apiKeys: true,
  errors: 'openai',
  responses: { 200: '{object: "list", data: [{id, object: "model", created, owned_by}]}' },
  replies: { 200: openAiModelListSchema },
  async handle({ app, caller }) {
    const data = await listModelIds(modelIdServices(app), caller);
    return { status: 200, body: { object: 'list', data } };
  },
});

export const getOpenAiModelEndpoint = endpoint({
  name: 'openAiGetModel',
  route: 'v1/models/{model}',
  methods: ['GET'],
  summary: 'One model of the list, by id (an assistant as `assistant:<assistantId>`).',
  auth: 'caller',
  apiKeys: true,
  errors: 'openai',
  params: z.object({ model: z.string().min(1).max(200) }),
  responses: { 200: '{id, object: "model", created, owned_by}', 404: 'model_not_found' },
  replies: { 200: openAiModelSchema },
  async handle({ app, caller, params }) {
    const models = await listModelIds(modelIdServices(app), caller);
    const model = models.find((entry) => entry.id === params.model);
    if (model === undefined) throw new ModelNotFoundError(params.model);
    return { status: 200, body: model };
  },
});

export const chatCompletionsEndpoint = endpoint({
  name: 'openAiChatCompletions',
  route: 'v1/chat/completions',
  methods: ['POST'],
  summary:
    "OpenAI's Chat Completions: the messages become a turn (queued as POST /api/chat queues one) in a new temporary conversation whose context they are, or in the conversation `x-conversation-id` names; `x-memory` (off | read | readwrite, default read) decides what memory does; `Idempotency-Key` makes a retry the same turn. Streamed as chunks ending in `[DONE]`, or one completion.",
  auth: 'caller',
  apiKeys: true,
  errors: 'openai',
  usesDurableClient: true,
  responses: {
    200: 'a chat.completion (JSON; a long answer starts with spaces, which keep the connection alive), or with `stream: true` chat.completion.chunk frames and `data: [DONE]`',
    404: 'model_not_found (not a model or assistant the caller may use), or `x-conversation-id` names no conversation of the caller',
    409: 'the Idempotency-Key was used with another request (message, context, tools or model)',
    429: 'a quota refuses the turn (retry-after)',
    500: "the turn failed (the error's code and message), when not streamed",
  },
  replies: {
    200: {
      content: {
        'application/json': chatCompletionSchema,
        'text/event-stream': chatCompletionChunkSchema,
      },
    },
  },
  body: {
    schema: chatCompletionRequestSchema,
    maxBytes: OPENAI_BODY_MAX_BYTES,
    what: 'chat completion request',
  },
  async handle({ app, caller, body, headers, context }) {
    const shape = openAiHeaders(headers);
    const services = completionServices(app, context);
    const posted = await postChatCompletion(services, caller, body, shape);
    const meta = {
      id: posted.id,
      model: posted.model,
      created: posted.created,
      includeUsage: body.stream_options?.include_usage === true,
      clientTools: posted.clientTools,
    };
    const onError = (error: unknown) => context.warn('Chat completion relay:', error);
    if (body.stream === true)
      return {
        status: 200,
        headers: { ...COMPLETION_STREAM_HEADERS },
        stream: completionChunkStream(services, posted, meta, onError),
      };
    return answerWhenEnded(awaitCompletion(services, posted, meta, onError));
  },
});

/** The shaping headers of an /api/v1 request, parsed (400 naming a bad one). */
export function openAiHeaders(headers: Headers) {
  return parseInput(
    openAiHeadersSchema,
    {
      'x-conversation-id': headers.get('x-conversation-id') ?? undefined,
      'x-memory': headers.get('x-memory') ?? undefined,
      'idempotency-key': headers.get('idempotency-key') ?? undefined,
    },
    'headers',
  );
}

/**
 * A non-streamed answer: plain JSON with its own status when the turn ends soon, else 200 at once with the JSON
 * after keep-alive spaces.
 */
export async function answerWhenEnded(outcome: Promise<TurnOutcome>): Promise<EndpointResult> {
  const quick = await Promise.race([outcome, delay(PLAIN_ANSWER_WAIT_MS)]);
  if (quick !== undefined) {
    if (quick.kind === 'completion') return { status: 200, body: quick.body };
    throw new AppError(quick.body.error.code, quick.body.error.message, 500);
  }
  return {
    status: 200,
    headers: { 'content-type': 'application/json', 'cache-control': 'no-store' },
    stream: keptAliveJson(outcome, JSON_KEEP_ALIVE_MS),
  };
}

function delay(ms: number): Promise<undefined> {
  return new Promise((resolve) => setTimeout(() => resolve(undefined), ms).unref());
}

function modelIdServices(app: App) {
  return { models: app.config.models, assistants: app.workspace.assistants.store };
}

export function completionServices(app: App, context: InvocationContext): ChatCompletionServices {
  const starter = sessionStarter(app);
  return {
    ...frontDoor(app),
    turnEvents: app.streaming.turnEvents,
    feed: app.streaming.feed,
    idleTimeoutMs: app.config.streaming.sseIdleTimeoutMs,
    modelIds: modelIdServices(app),
    builtInTool: (name) => app.chat.turn.tools.has(name),
    assistantShape: (caller, assistantId) =>
      starter.resolve?.(caller, { assistantId }) ?? Promise.resolve({}),
    orchestrations: app.orchestrations(context),
    temporaryTtlSeconds: app.config.chat.temporaryChatTtlSeconds,
    maxTextChars: app.config.chat.maxTextChars,
    conversations: app.chat.turn.workingMemory,
  };
}

export const openAiFunctions: FunctionDefinition[] = [
  httpFunction(listOpenAiModelsEndpoint),
  httpFunction(getOpenAiModelEndpoint),
  httpFunction(chatCompletionsEndpoint),
];
