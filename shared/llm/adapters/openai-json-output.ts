// JSON output validated by a zod schema, through Chat Completions' response_format or the Responses API's
// text.format (not streamed), with one corrective turn when the answer does not validate.
import type OpenAI from 'openai';
import { USAGE_FIELDS as CHAT_USAGE_FIELDS } from '../chat-stream-assembler.js';
import { parseJsonOutput, toJsonSchemaResponseFormat } from '../json-output.js';
import { LlmError, type ChatMessage, type CompleteJsonRequest, type LlmUsage } from '../llm-gateway.js';
import { toWireMessages } from './openai-chat-request.js';
import { callEndpoint, notOpenAiShaped, type OpenAiEndpoint } from './openai-endpoint.js';
import { responseFailed } from './openai-response-failure.js';
import { toResponsesInput } from './openai-responses-request.js';
import { USAGE_FIELDS as RESPONSES_USAGE_FIELDS } from '../responses-stream-assembler.js';
import { nonEmptyString, readUsage } from '../wire-reading.js';

/** One corrective turn when JSON output fails validation: models usually fix what they are told. */
const JSON_REPAIR_ATTEMPTS = 1;

/** One JSON-output answer, whichever API gave it. */
interface JsonAnswer {
  text: string;
  refusal: string | undefined;
  /** The answer stopped at the token limit. */
  truncated: boolean;
}

export function completeJson<T>(endpoint: OpenAiEndpoint, request: CompleteJsonRequest<T>): Promise<T> {
  const responses = endpoint.responsesClient;
  return askForJson(
    endpoint,
    request,
    responses
      ? (messages) => jsonByResponse(endpoint, responses, request, messages)
      : (messages) => jsonByCompletion(endpoint, request, messages),
  );
}

/**
 * The JSON-output loop of either API: ask, refuse a refusal, validate, and on unusable JSON ask once more with
 * the problem named (models usually fix what they are told).
 */
async function askForJson<T>(
  endpoint: OpenAiEndpoint,
  request: CompleteJsonRequest<T>,
  ask: (messages: ChatMessage[]) => Promise<JsonAnswer>,
): Promise<T> {
  const messages: ChatMessage[] = [...request.messages];
  for (let attempt = 0; ; attempt++) {
    const { text, refusal, truncated } = await ask(messages);
    if (refusal) {
      throw new LlmError(`${endpoint.name} refused to produce "${request.name}": ${refusal}`, {
        retryable: false,
      });
    }
    const parsed = parseJsonOutput(text, request.schema);
    if (parsed.ok) return parsed.value;
    if (attempt >= JSON_REPAIR_ATTEMPTS) {
      const cut = truncated ? ' (the answer was cut at the token limit)' : '';
      throw new LlmError(
        `${endpoint.name} returned unusable "${request.name}" JSON${cut}: ${parsed.problem}`,
        { retryable: true },
      );
    }
    messages.push(
      { role: 'assistant', content: text },
      { role: 'user', content: `${parsed.problem} Answer again with only the corrected JSON.` },
    );
  }
}

async function jsonByCompletion<T>(
  endpoint: OpenAiEndpoint,
  request: CompleteJsonRequest<T>,
  messages: ChatMessage[],
): Promise<JsonAnswer> {
  const completion = await callEndpoint(endpoint, endpoint.chatModel, () =>
    endpoint.client.chat.completions.create({
      model: endpoint.chatModel,
      messages: toWireMessages(messages),
      response_format: toJsonSchemaResponseFormat(request.schema, request.name),
      stream: false,
    }),
  );
  if (!Array.isArray((completion as Partial<typeof completion>).choices))
    throw notOpenAiShaped(endpoint, 'chat completion');
  reportUsage(request, readUsage(completion.usage, CHAT_USAGE_FIELDS), completion.model);
  const choice = completion.choices[0];
  return {
    text: choice?.message.content ?? '',
    refusal: choice?.message.refusal ?? undefined,
    truncated: choice?.finish_reason === 'length',
  };
}

/** JSON output through the Responses API: the same json_schema format, in `text.format`; not streamed. */
async function jsonByResponse<T>(
  endpoint: OpenAiEndpoint,
  client: OpenAI,
  request: CompleteJsonRequest<T>,
  messages: ChatMessage[],
): Promise<JsonAnswer> {
  const { json_schema: format } = toJsonSchemaResponseFormat(request.schema, request.name);
  const { instructions, input } = toResponsesInput(messages);
  const response = await callEndpoint(endpoint, endpoint.chatModel, () =>
    client.responses.create({
      model: endpoint.chatModel,
      ...(instructions !== undefined ? { instructions } : {}),
      input,
      text: { format: { type: 'json_schema', ...format } },
      store: false,
      stream: false,
    }),
  );
  if (!Array.isArray((response as Partial<typeof response>).output))
    throw notOpenAiShaped(endpoint, 'response');
  reportUsage(request, readUsage(response.usage, RESPONSES_USAGE_FIELDS), response.model);
  if (response.status === 'failed')
    throw responseFailed(
      endpoint.name,
      response.error
        ? { code: response.error.code, message: response.error.message }
        : { message: 'The response failed without saying why.' },
    );
  const { text, refusal } = outputOf(response.output);
  return { text, refusal, truncated: response.status === 'incomplete' };
}

/** Tells the caller what a request used, before its answer is judged: a refused or invalid answer was billed too. */
function reportUsage(
  request: CompleteJsonRequest<unknown>,
  usage: LlmUsage | undefined,
  model: unknown,
): void {
  if (!request.onUsage || !usage) return;
  const named = nonEmptyString(model);
  request.onUsage({ usage, ...(named !== undefined ? { model: named } : {}) });
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
