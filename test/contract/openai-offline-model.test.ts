// Contract of the offline model: the real openai client and the product's LLM gateway against it over
// HTTP, checking the wire shapes OpenAI uses and the same assembly path the replay tests cover.
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { OFFLINE_CHAT_MODEL, OFFLINE_EMBEDDING_MODEL } from '../../local/offline-model/offline-model.js';
import { productVocabulary } from '../../local/offline-model-vocabulary.js';
import {
  startOfflineModelServer,
  type OfflineModelServer,
} from '../../local/offline-model/offline-model-server.js';
import { createLlmGateway } from '../../shared/llm/adapters/openai-gateway.js';
import { LlmError, type LlmDelta, type LlmGateway, type ToolSpec } from '../../shared/llm/llm-gateway.js';

const PREFIX = '/offline-model/v1';

const addNumbers: ToolSpec = {
  name: 'add_numbers',
  description: 'Adds two numbers.',
  parameters: {
    type: 'object',
    properties: { a: { type: 'number' }, b: { type: 'number' } },
    required: ['a', 'b'],
    additionalProperties: false,
  },
};
const searchHistory: ToolSpec = {
  name: 'search_conversation_history',
  description: 'Searches past conversations.',
  parameters: {
    type: 'object',
    properties: { query: { type: 'string' }, limit: { type: 'integer', minimum: 1, maximum: 10 } },
    required: ['query'],
  },
};
const wireTools = [addNumbers, searchHistory].map((tool) => ({
  type: 'function' as const,
  function: { name: tool.name, description: tool.description, parameters: tool.parameters },
}));

let server: OfflineModelServer;
let client: OpenAI;
let gateway: LlmGateway;

function gatewayFor(baseUrl: string): LlmGateway {
  return createLlmGateway(
    {
      kind: 'openai-compatible',
      baseUrl,
      chatModel: OFFLINE_CHAT_MODEL,
      embeddingModel: OFFLINE_EMBEDDING_MODEL,
    },
    { maxRetries: 0, timeoutMs: 10_000 },
  );
}

beforeAll(async () => {
  server = await startOfflineModelServer({ pathPrefix: PREFIX, vocabulary: productVocabulary });
  client = new OpenAI({ baseURL: server.baseUrl, apiKey: 'unused', maxRetries: 0 });
  gateway = gatewayFor(server.baseUrl);
});

afterAll(async () => {
  await server?.close();
});

// System and user messages only: the same array suits the gateway and the raw client.
const ask = (content: string) => [
  { role: 'system' as const, content: 'You are a helpful assistant.' },
  { role: 'user' as const, content },
];

async function rawChunks(body: OpenAI.Chat.ChatCompletionCreateParamsStreaming) {
  const chunks: OpenAI.Chat.ChatCompletionChunk[] = [];
  for await (const chunk of await client.chat.completions.create(body)) chunks.push(chunk);
  return chunks;
}

describe('chat completions', () => {
  it('streams text that assembles exactly into the non-streamed answer, one token per delta', async () => {
    const question = 'Hello there! How are 🧡 you,\u202ftoday?';
    const deltas: LlmDelta[] = [];
    const streamed = await gateway.streamChat({ messages: ask(question) }, (delta) => deltas.push(delta));
    const plain = await client.chat.completions.create({
      model: OFFLINE_CHAT_MODEL,
      messages: ask(question),
    });

    expect(streamed.content).toBe(plain.choices[0]?.message.content);
    expect(streamed.content).toContain(question);
    expect(streamed.content).toMatch(/stand-in/);
    expect(streamed.finishReason).toBe('stop');
    expect(deltas.length).toBeGreaterThan(10);
    expect(deltas.every((d) => d.type === 'content')).toBe(true);
    expect(deltas.map((d) => (d.type === 'content' ? d.text : '')).join('')).toBe(streamed.content);
  });

  it('sends the role chunk first, then the finish chunk, then a usage chunk with no choices', async () => {
    const chunks = await rawChunks({
      model: OFFLINE_CHAT_MODEL,
      messages: ask('reply with 3 words'),
      stream: true,
      stream_options: { include_usage: true },
    });
    expect(chunks[0]?.choices[0]?.delta).toMatchObject({ role: 'assistant', content: '' });
    expect(chunks.at(-2)?.choices[0]).toMatchObject({ delta: {}, finish_reason: 'stop' });
    const usageChunk = chunks.at(-1);
    expect(usageChunk?.choices).toEqual([]);
    expect(usageChunk?.usage).toMatchObject({
      completion_tokens: 3,
      total_tokens: expect.any(Number) as number,
    });
    // Without include_usage there is no usage chunk.
    const withoutUsage = await rawChunks({
      model: OFFLINE_CHAT_MODEL,
      messages: ask('reply with 3 words'),
      stream: true,
    });
    expect(withoutUsage.at(-1)?.choices[0]?.finish_reason).toBe('stop');
    expect(withoutUsage.some((c) => c.usage)).toBe(false);
  });

  it('fragments tool calls like the real API, and the gateway assembles them into the non-streamed calls', async () => {
    const question = 'Please add_numbers 2 and 3';
    const chunks = await rawChunks({
      model: OFFLINE_CHAT_MODEL,
      messages: ask(question),
      tools: wireTools,
      stream: true,
      stream_options: { include_usage: true },
    });
    const fragments = chunks.flatMap((c) => c.choices[0]?.delta.tool_calls ?? []);
    expect(fragments[0]).toEqual({
      index: 0,
      id: expect.stringMatching(/^call_[A-Za-z0-9]{24}$/) as string,
      type: 'function',
      function: { name: 'add_numbers', arguments: '' },
    });
    expect(fragments.length).toBeGreaterThan(3);
    for (const later of fragments.slice(1)) expect(Object.keys(later).sort()).toEqual(['function', 'index']);
    expect(chunks[0]?.choices[0]?.delta.content).toBeNull();

    const step = await gateway.streamChat({ messages: ask(question), tools: [addNumbers, searchHistory] });
    const plain = await client.chat.completions.create({
      model: OFFLINE_CHAT_MODEL,
      messages: ask(question),
      tools: wireTools,
    });
    const plainCalls = (plain.choices[0]?.message.tool_calls ?? []).map((call) =>
      call.type === 'function'
        ? { id: call.id, name: call.function.name, arguments: call.function.arguments }
        : call,
    );
    expect(step.toolCalls).toEqual([
      { id: fragments[0]?.id, name: 'add_numbers', arguments: '{"a":2,"b":3}' },
    ]);
    expect(step.toolCalls).toEqual(plainCalls);
    expect(step.finishReason).toBe('tool_calls');
    expect(step.content).toBe('');
  });

  it('makes parallel tool calls for several named tools, in the order named', async () => {
    const deltas: LlmDelta[] = [];
    const step = await gateway.streamChat(
      {
        messages: ask('search_conversation_history for "Rome trip", then add_numbers 4 and 5'),
        tools: [addNumbers, searchHistory],
      },
      (delta) => deltas.push(delta),
    );
    expect(
      step.toolCalls.map(({ name, arguments: args }) => ({ name, args: JSON.parse(args) as unknown })),
    ).toEqual([
      { name: 'search_conversation_history', args: { query: 'Rome trip', limit: 4 } },
      { name: 'add_numbers', args: { a: 4, b: 5 } },
    ]);
    expect(new Set(step.toolCalls.map((call) => call.id)).size).toBe(2);
    expect(deltas.filter((d) => d.type === 'tool-call')).toEqual(
      step.toolCalls.map((call, index) => ({ type: 'tool-call', index, id: call.id, name: call.name })),
    );
  });

  it('answers the tool-result turn in text that uses the results', async () => {
    const first = await gateway.streamChat({ messages: ask('add_numbers 2 and 3'), tools: [addNumbers] });
    const call = first.toolCalls[0]!;
    const second = await gateway.streamChat({
      messages: [
        ...ask('add_numbers 2 and 3'),
        { role: 'assistant', content: first.content, tool_calls: first.toolCalls },
        { role: 'tool', tool_call_id: call.id, content: '5' },
      ],
      tools: [addNumbers],
    });
    expect(second).toMatchObject({ content: 'add_numbers returned 5.', toolCalls: [], finishReason: 'stop' });
  });

  it('streams reasoning before the answer when asked to think', async () => {
    const deltas: LlmDelta[] = [];
    const step = await gateway.streamChat({ messages: ask('Think about it and reply with 4 words') }, (d) =>
      deltas.push(d),
    );
    expect(step.reasoning).toBe(
      'The user wrote "Think about it and reply with 4 words". I will reply with 4 words.',
    );
    expect(step.content.split(' ')).toHaveLength(4);
    const firstContent = deltas.findIndex((d) => d.type === 'content');
    expect(deltas.slice(0, firstContent).every((d) => d.type === 'reasoning')).toBe(true);
    expect(deltas.slice(firstContent).every((d) => d.type === 'content')).toBe(true);
    expect(step.usage?.reasoningTokens).toBeGreaterThan(0);
  });

  it('reports usage and cuts at maxTokens with finish reason "length"', async () => {
    const step = await gateway.streamChat({ messages: ask('reply with 50 words'), maxTokens: 5 });
    expect(step.content.split(' ')).toHaveLength(5);
    expect(step.finishReason).toBe('length');
    expect(step.usage).toMatchObject({ completionTokens: 5, promptTokens: expect.any(Number) as number });
  });
});

describe('structured output', () => {
  it('returns json_schema output that the zod schema validates', async () => {
    const schema = z.object({
      title: z.string().max(40),
      themes: z.array(z.string()).min(1),
      sentiment: z.enum(['positive', 'neutral', 'negative']),
      turns: z.number().int(),
    });
    const value = await gateway.completeJson({
      messages: ask('Title this neutral conversation of 6 turns about "Rome"'),
      schema,
      name: 'conversation_title',
    });
    expect(value).toEqual({
      title: 'Rome',
      themes: [expect.any(String) as string],
      sentiment: 'neutral',
      turns: 6,
    });
  });
});

describe('embeddings', () => {
  it('agree between float and base64 encodings, through the SDK default and the gateway', async () => {
    const texts = ['planning a trip to Rome', 'the Rome trip hotels', 'tax filing deadlines'];
    const floats = await client.embeddings.create({
      model: OFFLINE_EMBEDDING_MODEL,
      input: texts,
      encoding_format: 'float',
    });
    const sdkDefault = await client.embeddings.create({ model: OFFLINE_EMBEDDING_MODEL, input: texts });
    const viaGateway = await gateway.embed(texts);

    const floatVectors = floats.data.map((d) => d.embedding);
    expect(viaGateway).toEqual(floatVectors);
    expect(sdkDefault.data.map((d) => d.embedding)).toEqual(floatVectors);
    expect(viaGateway[0]).toHaveLength(256);
    const cosine = (a: number[], b: number[]) => a.reduce((s, v, i) => s + v * (b[i] ?? 0), 0);
    expect(cosine(viaGateway[0]!, viaGateway[1]!)).toBeGreaterThan(cosine(viaGateway[0]!, viaGateway[2]!));
  });
});

describe('models, probe and errors', () => {
  it('lists its models and passes the gateway probe', async () => {
    const models = await client.models.list();
    expect(models.data.map((m) => m.id)).toEqual([OFFLINE_CHAT_MODEL, OFFLINE_EMBEDDING_MODEL]);
    expect(await gateway.probe()).toEqual({
      ok: true,
      detail: `LLM endpoint ${server.baseUrl} is reachable; chat model "${OFFLINE_CHAT_MODEL}" is listed.`,
    });
  });

  it('answers bad requests with OpenAI-style 400 errors that the gateway maps to LlmError', async () => {
    const error = await client.chat.completions
      .create({ model: OFFLINE_CHAT_MODEL, messages: [] })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect((error as InstanceType<typeof OpenAI.BadRequestError>).param).toBe('messages');

    const mapped = (await gateway
      .streamChat({
        messages: [{ role: 'tool', tool_call_id: undefined as unknown as string, content: 'x' }],
      })
      .catch((e: unknown) => e)) as LlmError;
    expect(mapped).toBeInstanceOf(LlmError);
    expect(mapped.providerStatus).toBe(400);
    expect(mapped.message).toMatch(/HTTP 400: Invalid request: messages\.0\.tool_call_id/);
  });

  it('answers unknown routes with 404 and leaves paths outside its prefix alone', async () => {
    const unknown = await fetch(`${server.baseUrl}/completions`, { method: 'POST', body: '{}' });
    expect(unknown.status).toBe(404);
    expect(((await unknown.json()) as { error: { message: string } }).error.message).toMatch(
      /Unknown offline-model route/,
    );
    const outside = await fetch(server.baseUrl.replace(PREFIX, '/api/health'));
    expect(outside.status).toBe(404);
    expect(((await outside.json()) as { error: { message: string } }).error.message).toMatch(/^Not found/);
    const notJson = await fetch(`${server.baseUrl}/chat/completions`, { method: 'POST', body: '{oops' });
    expect(notJson.status).toBe(400);
  });
});

describe('pacing', () => {
  let paced: OfflineModelServer;
  const ttftMs = 150;
  const tokensPerSecond = 100;

  beforeAll(async () => {
    paced = await startOfflineModelServer({ pathPrefix: PREFIX, ttftMs, tokensPerSecond });
  });
  afterAll(async () => {
    await paced?.close();
  });

  it('waits ttftMs before the first token and paces the rest at tokensPerSecond (lower bounds only)', async () => {
    const pacedGateway = gatewayFor(paced.baseUrl);
    const started = performance.now();
    let firstToken: number | undefined;
    const step = await pacedGateway.streamChat({ messages: ask('reply with 20 words') }, () => {
      firstToken ??= performance.now();
    });
    const total = performance.now() - started;
    expect(step.content.split(' ')).toHaveLength(20);
    expect(firstToken! - started).toBeGreaterThanOrEqual(ttftMs - 5);
    // 20 words are 22 tokens ("stand-in" is three); the last one is due 21 intervals after the first.
    const tokens = step.usage!.completionTokens;
    expect(total).toBeGreaterThanOrEqual(ttftMs + ((tokens - 1) * 1000) / tokensPerSecond - 5);
  });

  it('stops streaming when the caller cancels, keeping what arrived', async () => {
    const controller = new AbortController();
    const pacedGateway = gatewayFor(paced.baseUrl);
    let contentDeltas = 0;
    const step = await pacedGateway.streamChat(
      { messages: ask('reply with 200 words'), signal: controller.signal },
      (delta) => {
        if (delta.type === 'content' && ++contentDeltas === 3) controller.abort();
      },
    );
    expect(step.finishReason).toBe('cancelled');
    expect(step.content.split(' ').length).toBeGreaterThanOrEqual(3);
    expect(step.content.split(' ').length).toBeLessThan(200);
    // The server is still healthy afterwards.
    expect((await pacedGateway.probe()).ok).toBe(true);
  });
});

describe('the Responses API', () => {
  let responses: LlmGateway;
  let reasoning: LlmGateway;
  beforeAll(() => {
    const connection = {
      kind: 'openai-compatible' as const,
      baseUrl: server.baseUrl,
      chatModel: OFFLINE_CHAT_MODEL,
      embeddingModel: OFFLINE_EMBEDDING_MODEL,
      api: 'responses' as const,
    };
    responses = createLlmGateway(connection, { maxRetries: 0, timeoutMs: 10_000 });
    reasoning = createLlmGateway(
      { ...connection, reasoningEffort: 'low' },
      { maxRetries: 0, timeoutMs: 10_000 },
    );
  });

  async function rawEvents(body: OpenAI.Responses.ResponseCreateParamsStreaming) {
    const events: OpenAI.Responses.ResponseStreamEvent[] = [];
    for await (const event of await client.responses.create(body)) events.push(event);
    return events;
  }

  it('streams the same answer as Chat Completions and as its own non-streamed response', async () => {
    const question = 'Hello there! How are 🧡 you,\u202ftoday?';
    const deltas: LlmDelta[] = [];
    const streamed = await responses.streamChat({ messages: ask(question) }, (delta) => deltas.push(delta));
    const chat = await gateway.streamChat({ messages: ask(question) });
    const plain = await client.responses.create({
      model: OFFLINE_CHAT_MODEL,
      instructions: 'You are a helpful assistant.',
      input: question,
    });

    expect(streamed).toMatchObject({ content: chat.content, finishReason: 'stop', reasoning: '' });
    expect(plain.output_text).toBe(streamed.content);
    expect(plain.status).toBe('completed');
    expect(deltas.length).toBeGreaterThan(10);
    expect(deltas.every((delta) => delta.type === 'content')).toBe(true);
    expect(streamed.usage).toMatchObject({ cachedPromptTokens: 0, reasoningTokens: 0 });
  });

  it('sends OpenAI events: named twice, numbered from 0, with no [DONE]', async () => {
    const response = await fetch(`${server.baseUrl}/responses`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: OFFLINE_CHAT_MODEL, input: 'reply with 3 words', stream: true }),
    });
    const text = await response.text();
    expect(text).not.toContain('[DONE]');
    const blocks = text.trim().split('\n\n');
    const parsed = blocks.map((block) => {
      const [eventLine, dataLine] = block.split('\n');
      const data = JSON.parse(dataLine!.slice('data: '.length)) as { type: string; sequence_number: number };
      expect(eventLine).toBe(`event: ${data.type}`);
      return data;
    });
    expect(parsed.map((event) => event.sequence_number)).toEqual(parsed.map((_, index) => index));
    expect(parsed.at(-1)?.type).toBe('response.completed');
  });

  it('streams the reasoning as summary parts only when a summary is asked for', async () => {
    const deltas: LlmDelta[] = [];
    const step = await reasoning.streamChat({ messages: ask('think about the number 7') }, (delta) =>
      deltas.push(delta),
    );
    expect(step.reasoningParts).toEqual([
      '**Reading the message**\n\nThe user wrote "think about the number 7".',
      '**Planning the answer**\n\nI will reply briefly.',
    ]);
    expect(deltas.filter((delta) => delta.type === 'reasoning-end')).toHaveLength(2);
    expect(deltas.findIndex((delta) => delta.type === 'content')).toBeGreaterThan(
      deltas.findLastIndex((delta) => delta.type === 'reasoning-end'),
    );
    expect(step.usage?.reasoningTokens).toBeGreaterThan(0);

    // Without reasoning options the same question reasons in silence, as OpenAI's models do.
    const quiet = await responses.streamChat({ messages: ask('think about the number 7') });
    expect(quiet).toMatchObject({ content: step.content, reasoning: '' });
    expect(quiet.reasoningParts).toBeUndefined();
    expect(quiet.usage?.reasoningTokens).toBe(step.usage?.reasoningTokens);
  });

  it('calls tools in parallel with split arguments, then answers from their outputs', async () => {
    const tools = [addNumbers, { ...addNumbers, name: 'multiply' }];
    const events = await rawEvents({
      model: OFFLINE_CHAT_MODEL,
      input: 'add_numbers and multiply 2 and 3',
      tools: tools.map((tool) => ({ type: 'function', strict: false, ...tool })),
      stream: true,
    });
    const argumentDeltas = events.filter((event) => event.type === 'response.function_call_arguments.delta');
    expect(argumentDeltas.length).toBeGreaterThan(4);

    const first = await responses.streamChat({ messages: ask('add_numbers and multiply 2 and 3'), tools });
    expect(first.finishReason).toBe('tool_calls');
    expect(first.toolCalls.map(({ name, arguments: args }) => [name, JSON.parse(args) as unknown])).toEqual([
      ['add_numbers', { a: 2, b: 3 }],
      ['multiply', { a: 2, b: 3 }],
    ]);
    const second = await responses.streamChat({
      messages: [
        ...ask('add_numbers and multiply 2 and 3'),
        { role: 'assistant', content: '', tool_calls: first.toolCalls },
        { role: 'tool', tool_call_id: first.toolCalls[0]!.id, content: '5' },
        { role: 'tool', tool_call_id: first.toolCalls[1]!.id, content: '6' },
      ],
      tools,
    });
    expect(second).toMatchObject({
      content: 'add_numbers returned 5. multiply returned 6.',
      finishReason: 'stop',
      toolCalls: [],
    });
  });

  it('answers JSON output, stops at max_output_tokens, and refuses a cap below 16', async () => {
    const value = await responses.completeJson({
      messages: ask('Title this neutral conversation of 6 turns about "Rome"'),
      schema: z.object({ title: z.string(), turns: z.number().int() }),
      name: 'conversation_title',
    });
    expect(value).toEqual({ title: 'Rome', turns: 6 });

    const cut = await responses.streamChat({ messages: ask('reply with 40 words'), maxTokens: 20 });
    expect(cut.finishReason).toBe('length');
    expect(cut.usage?.completionTokens).toBe(20);
    expect(cut.content.split(' ').length).toBeLessThan(40);

    const error = await client.responses
      .create({ model: OFFLINE_CHAT_MODEL, input: 'hi', max_output_tokens: 8 })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect((error as InstanceType<typeof OpenAI.BadRequestError>).param).toBe('max_output_tokens');
  });
});
