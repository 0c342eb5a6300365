// POST /api/v1/responses: OpenAI's Responses API over the same turn as /api/v1/chat/completions, a response id
// naming its turn so that previous_response_id continues its conversation.
import {
  createResponseRequestSchema,
  responseSchema,
  responseStreamEventSchema,
} from '../shared/openai-api/responses-contracts.js';
import { OPENAI_BODY_MAX_BYTES } from '../shared/openai-api/contracts.js';
import {
  awaitTurnEvents,
  COMPLETION_STREAM_HEADERS,
  followTurn,
} from '../shared/openai-api/completion-stream.js';
import {
  endedResponse,
  ResponseEventFramer,
  type ResponseMeta,
} from '../shared/openai-api/response-events.js';
import { postResponse } from '../shared/openai-api/responses.js';
import type { FunctionDefinition } from './definition.js';
import { endpoint, httpFunction } from './endpoint.js';
import { answerWhenEnded, completionServices, openAiHeaders } from './openai-api.js';

export const createResponseEndpoint = endpoint({
  name: 'openAiCreateResponse',
  route: 'v1/responses',
  methods: ['POST'],
  summary:
    "OpenAI's Responses API over the same turn as chat completions: `input` (text or items) and `instructions` are a new temporary conversation's context, or `previous_response_id` continues that response's conversation; function tools pass to the model; streamed as response events or one response.",
  auth: 'caller',
  apiKeys: true,
  errors: 'openai',
  usesDurableClient: true,
  responses: {
    200: 'a response (JSON; a long one starts with spaces), or with `stream: true` its events (response.created, response.output_text.delta, ..., response.completed)',
    404: 'model_not_found, or previous_response_not_found (not a response of the caller)',
    409: 'the Idempotency-Key was used with another input',
    429: 'a quota refuses the turn (retry-after)',
    500: "the turn failed (the error's code and message), when not streamed",
  },
  replies: {
    200: {
      content: { 'application/json': responseSchema, 'text/event-stream': responseStreamEventSchema },
    },
  },
  body: { schema: createResponseRequestSchema, maxBytes: OPENAI_BODY_MAX_BYTES, what: 'response request' },
  async handle({ app, caller, body, headers, context }) {
    const services = completionServices(app, context);
    const posted = await postResponse(services, caller, body, openAiHeaders(headers));
    const meta: ResponseMeta = {
      id: posted.id,
      model: posted.model,
      created: posted.created,
      includeUsage: true,
      clientTools: posted.clientTools,
      previousResponseId: posted.previousResponseId,
      instructions: body.instructions ?? null,
    };
    const onError = (error: unknown) => context.warn('Response relay:', error);
    if (body.stream === true) {
      const framer = new ResponseEventFramer(meta);
      return {
        status: 200,
        headers: { ...COMPLETION_STREAM_HEADERS },
        stream: followTurn(services, posted, (event) => framer.push(event), onError),
      };
    }
    // A failed turn is a response with status failed, as OpenAI answers one.
    return answerWhenEnded(
      awaitTurnEvents(services, posted, onError).then((events) => ({
        kind: 'completion' as const,
        body: endedResponse(meta, events),
      })),
    );
  },
});

export const openAiResponseFunctions: FunctionDefinition[] = [httpFunction(createResponseEndpoint)];
