// The official `openai` package against /api/v1 on the local runtime, with a scripted model behind the turn: the
// model list, chat completions streamed and not, the request's context, conversations, idempotency and errors.
import OpenAI from 'openai';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalRuntime } from '../../local/runtime.js';
import { SEARCH_CONVERSATION_HISTORY_TOOL } from '../../shared/memory/contracts.js';
import { DEV_IDENTITY_HEADER } from '../support/chat-client.js';
import { devOpenAiClient, lastUser, startOpenAiRuntime } from '../support/openai-client.js';
import type { ScriptedModel } from '../support/scripted-model.js';

describe('the OpenAI-compatible API, read by the openai package', () => {
  let runtime: LocalRuntime;
  let model: ScriptedModel;

  beforeAll(async () => {
    ({ runtime, model } = await startOpenAiRuntime((request) => {
      const last = request.messages.at(-1);
      const offered = (request.tools ?? []).map((tool) => tool.function.name);
      if (last?.role === 'tool') return { content: `The weather: ${last.content ?? ''}` };
      if (offered.includes('get_weather') && lastUser(request).startsWith('Weather'))
        return {
          toolCalls: [
            // The turn's own tool runs inside the turn; the client's is handed back.
            ...(lastUser(request).includes('and add')
              ? [{ name: 'add_numbers', arguments: '{"a":2,"b":3}' }]
              : []),
            { name: 'get_weather', arguments: '{"city":"Paris"}' },
          ],
        };
      return { content: `Echo: ${lastUser(request)}` };
    }));
  }, 60_000);

  afterAll(async () => {
    await runtime?.stop();
    await model?.close();
  }, 60_000);

  const client = (userId = 'user_001', headers: Record<string, string> = {}) =>
    devOpenAiClient(runtime, userId, headers);
  const defaultModel = () => runtime.app.config.models.defaultModel;
  /** The chat requests the model received whose last user message is `text`. */
  const requestsFor = (text: string) => model.requests.filter((request) => lastUser(request) === text);

  it('lists the catalogue and the caller’s assistants as models', async () => {
    const created = await fetch(`${runtime.url}/api/assistants`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', [DEV_IDENTITY_HEADER]: 'user_002' },
      body: JSON.stringify({ name: 'Pirate', instructions: 'Talk like a pirate.' }),
    });
    expect(created.status).toBe(201);
    const { assistantId } = (await created.json()) as { assistantId: string };
    const ids: string[] = [];
    for await (const entry of client('user_002').models.list()) ids.push(entry.id);
    expect(ids[0]).toBe(defaultModel());
    expect(ids).toContain(`assistant:${assistantId}`);
    // Another user's private assistant is not theirs to see.
    const others: string[] = [];
    for await (const entry of client('user_003').models.list()) others.push(entry.id);
    expect(others).not.toContain(`assistant:${assistantId}`);
    const one = await client('user_002').models.retrieve(`assistant:${assistantId}`);
    expect(one.owned_by).toBe('you');
  }, 30_000);

  it('answers a completion, with the request’s messages as the model’s context', async () => {
    const text = `Which colour? ${randomUUID()}`;
    const completion = await client().chat.completions.create({
      model: defaultModel(),
      messages: [
        { role: 'system', content: 'You answer in one word.' },
        { role: 'user', content: 'I like the sea.' },
        { role: 'assistant', content: 'Noted.' },
        { role: 'user', content: text },
      ],
    });
    expect(completion.object).toBe('chat.completion');
    expect(completion.choices[0]?.message.content).toBe(`Echo: ${text}`);
    expect(completion.choices[0]?.finish_reason).toBe('stop');
    expect(completion.usage?.total_tokens).toBeGreaterThan(0);
    const [sent] = requestsFor(text);
    const roles = sent?.messages.map((message) => `${message.role}:${message.content ?? ''}`) ?? [];
    // The turn's own system prompt first, then the messages as given.
    expect(roles.slice(-4)).toEqual([
      'system:You answer in one word.',
      'user:I like the sea.',
      'assistant:Noted.',
      `user:${text}`,
    ]);
    expect(sent?.messages[0]?.role).toBe('system');
  }, 30_000);

  it('streams a completion as chunks, with the usage chunk when asked', async () => {
    const text = `Stream this ${randomUUID()}`;
    const stream = await client().chat.completions.create({
      model: defaultModel(),
      messages: [{ role: 'user', content: text }],
      stream: true,
      stream_options: { include_usage: true },
    });
    let answer = '';
    const finishes: string[] = [];
    let usage: OpenAI.CompletionUsage | undefined | null;
    for await (const chunk of stream) {
      answer += chunk.choices[0]?.delta.content ?? '';
      if (chunk.choices[0]?.finish_reason) finishes.push(chunk.choices[0].finish_reason);
      if (chunk.usage) usage = chunk.usage;
    }
    expect(answer).toBe(`Echo: ${text}`);
    expect(finishes).toEqual(['stop']);
    expect(usage?.completion_tokens).toBeGreaterThan(0);
  }, 30_000);

  it('continues a conversation x-conversation-id names, which holds the context itself', async () => {
    const conversationId = randomUUID().replaceAll('-', '').slice(0, 16);
    const chat = client('user_001', { 'x-conversation-id': conversationId });
    const first = `My name is Ada ${randomUUID()}`;
    await chat.chat.completions.create({
      model: defaultModel(),
      messages: [{ role: 'user', content: first }],
    });
    const second = `What is my name? ${randomUUID()}`;
    const answer = await chat.chat.completions.create({
      model: defaultModel(),
      // Earlier messages a client sends again are not the context here: the stored conversation is.
      messages: [{ role: 'user', content: second }],
    });
    expect(answer.choices[0]?.message.content).toBe(`Echo: ${second}`);
    const sent = requestsFor(second)[0]?.messages.map((message) => message.content) ?? [];
    expect(sent).toContain(first);
    expect(sent).toContain(`Echo: ${first}`);
    // The conversation is the caller's, kept in their history.
    const session = await runtime.app.chat.sessions.find('user_001', conversationId);
    expect(session?.temporary).toBeUndefined();
  }, 30_000);

  it('reads memory by default, and not with x-memory: off', async () => {
    const offered = async (headers: Record<string, string>) => {
      const text = `Memory? ${randomUUID()}`;
      await client('user_001', headers).chat.completions.create({
        model: defaultModel(),
        messages: [{ role: 'user', content: text }],
      });
      return requestsFor(text)[0]?.tools?.map((tool) => tool.function.name) ?? [];
    };
    expect(await offered({})).toContain(SEARCH_CONVERSATION_HISTORY_TOOL);
    expect(await offered({ 'x-memory': 'off' })).not.toContain(SEARCH_CONVERSATION_HISTORY_TOOL);
    const refused = await client('user_001', { 'x-memory': 'sometimes' })
      .chat.completions.create({ model: defaultModel(), messages: [{ role: 'user', content: 'hi' }] })
      .catch((error: unknown) => error);
    expect((refused as InstanceType<typeof OpenAI.BadRequestError>).param).toBe('x-memory');
  }, 30_000);

  it('answers a retried request with the same Idempotency-Key from the same turn', async () => {
    const text = `Once only ${randomUUID()}`;
    const key = randomUUID();
    const ask = () =>
      client('user_001', { 'idempotency-key': key }).chat.completions.create({
        model: defaultModel(),
        messages: [{ role: 'user', content: text }],
      });
    const first = await ask();
    const again = await ask();
    expect(again.id).toBe(first.id);
    expect(again.choices[0]?.message.content).toBe(first.choices[0]?.message.content);
    expect(requestsFor(text)).toHaveLength(1);
    // The same key with the same last message but another context is another request: refused, not replayed.
    const other = await client('user_001', { 'idempotency-key': key })
      .chat.completions.create({
        model: defaultModel(),
        messages: [
          { role: 'system', content: 'Answer in French.' },
          { role: 'user', content: text },
        ],
      })
      .catch((error: unknown) => error);
    expect(other).toBeInstanceOf(OpenAI.ConflictError);
    expect(requestsFor(text)).toHaveLength(1);
  }, 30_000);

  const weatherTool: OpenAI.ChatCompletionTool = {
    type: 'function',
    function: {
      name: 'get_weather',
      description: 'The weather in a city.',
      parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
    },
  };

  it('hands a call of the client’s tool back, and goes on from its result', async () => {
    const question = `Weather in Paris, and add 2 and 3? ${randomUUID()}`;
    const messages: OpenAI.ChatCompletionMessageParam[] = [
      { role: 'system', content: 'Use the tools.' },
      { role: 'user', content: question },
    ];
    const first = await client().chat.completions.create({
      model: defaultModel(),
      messages,
      tools: [weatherTool],
    });
    const choice = first.choices[0];
    expect(choice?.finish_reason).toBe('tool_calls');
    expect(choice?.message.content).toBeNull();
    const calls = choice?.message.tool_calls ?? [];
    expect(calls.map((call) => call.type === 'function' && call.function.name)).toEqual(['get_weather']);
    const call = calls[0]!;
    // The model was offered the client's tool beside the turn's own, and the turn ran its own call itself.
    const asked = requestsFor(question);
    expect(asked[0]?.tools?.map((tool) => tool.function.name)).toEqual(
      expect.arrayContaining(['get_weather', 'add_numbers']),
    );
    expect(asked).toHaveLength(1);
    const [sessionId, chatMessageId] = first.id.slice('chatcmpl-'.length).split('.');
    const events = await runtime.app.streaming.turnEvents.read(sessionId!, chatMessageId!, 0);
    const ran = events.flatMap((event) =>
      event.type === 'tool-result' ? [`${event.name}: ${event.result}`] : [],
    );
    expect(ran).toEqual([expect.stringMatching(/^add_numbers: .*5/)]);

    const answer = await client().chat.completions.create({
      model: defaultModel(),
      messages: [...messages, choice!.message, { role: 'tool', tool_call_id: call.id, content: 'sunny' }],
      tools: [weatherTool],
    });
    expect(answer.choices[0]?.message.content).toBe('The weather: sunny');
    expect(answer.choices[0]?.finish_reason).toBe('stop');
    const continued = model.requests.find((request) => request.messages.at(-1)?.content === 'sunny');
    expect(continued?.messages.slice(-4).map((message) => message.role)).toEqual([
      'system',
      'user',
      'assistant',
      'tool',
    ]);
    expect(continued?.messages.at(-2)?.tool_calls?.[0]?.id).toBe(call.id);
  }, 30_000);

  it('goes on from tool results in a kept conversation, its user message once on the path', async () => {
    const conversationId = randomUUID().replaceAll('-', '').slice(0, 16);
    const chat = client('user_001', { 'x-conversation-id': conversationId });
    const question = `Weather in Paris? ${randomUUID()}`;
    const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: 'user', content: question }];
    const first = await chat.chat.completions.create({
      model: defaultModel(),
      messages,
      tools: [weatherTool],
    });
    const asked = first.choices[0]!.message;
    expect(first.choices[0]?.finish_reason).toBe('tool_calls');
    const call = asked.tool_calls![0]!;
    const answer = await chat.chat.completions.create({
      model: defaultModel(),
      messages: [...messages, asked, { role: 'tool', tool_call_id: call.id, content: 'rainy' }],
      tools: [weatherTool],
    });
    expect(answer.choices[0]?.message.content).toBe('The weather: rainy');
    const sent = model.requests.find((request) => request.messages.at(-1)?.content === 'rainy');
    // The same prompt as the round that asked, then the call and its result.
    expect(sent?.messages.slice(-3).map((message) => message.role)).toEqual(['user', 'assistant', 'tool']);
    expect(sent?.messages.filter((message) => message.content === question)).toHaveLength(1);
    const memory = await runtime.app.chat.turn.workingMemory.load('user_001', conversationId);
    expect(memory.messages.filter((message) => message.content === question)).toHaveLength(1);
    expect(memory.messages.at(-1)?.content).toBe('The weather: rainy');
  }, 30_000);

  it('streams the handed-back call as tool_calls chunks', async () => {
    const stream = await client().chat.completions.create({
      model: defaultModel(),
      messages: [{ role: 'user', content: `Weather in Paris? ${randomUUID()}` }],
      tools: [weatherTool],
      stream: true,
    });
    const names: string[] = [];
    let args = '';
    let finish: string | null | undefined;
    for await (const chunk of stream) {
      for (const call of chunk.choices[0]?.delta.tool_calls ?? []) {
        if (call.function?.name) names.push(call.function.name);
        args += call.function?.arguments ?? '';
      }
      finish = chunk.choices[0]?.finish_reason ?? finish;
    }
    expect(names).toEqual(['get_weather']);
    expect(JSON.parse(args)).toEqual({ city: 'Paris' });
    expect(finish).toBe('tool_calls');
  }, 30_000);

  it('answers a quota’s refusal as OpenAI’s 429 with retry-after', async () => {
    const base = runtime.app.quota.config;
    // The window is the UTC clock minute: start well inside one, so both requests share it.
    const second = new Date().getUTCSeconds();
    if (second > 50) await new Promise((resolve) => setTimeout(resolve, (61 - second) * 1000));
    runtime.app.quota.config = { ...base, messagesPerMinute: 1 };
    try {
      const ask = () =>
        client('user_003').chat.completions.create({
          model: defaultModel(),
          messages: [{ role: 'user', content: `Counted ${randomUUID()}` }],
        });
      await ask();
      const refused = await ask().catch((error: unknown) => error);
      expect(refused).toBeInstanceOf(OpenAI.RateLimitError);
      const error = refused as InstanceType<typeof OpenAI.RateLimitError>;
      expect(error.type).toBe('rate_limit_error');
      expect(error.code).toBe('quota_exceeded');
      expect(Number(error.headers?.get('retry-after'))).toBeGreaterThan(0);
    } finally {
      runtime.app.quota.config = base;
    }
  }, 30_000);

  it('refuses in OpenAI’s shape: an unknown model, a bad body, no identity, a body too large', async () => {
    const unknown = await client()
      .chat.completions.create({ model: 'no-such-model', messages: [{ role: 'user', content: 'hi' }] })
      .catch((error: unknown) => error);
    expect(unknown).toBeInstanceOf(OpenAI.NotFoundError);
    expect((unknown as InstanceType<typeof OpenAI.NotFoundError>).code).toBe('model_not_found');

    const badBody = await client()
      .chat.completions.create({ model: defaultModel(), messages: [] })
      .catch((error: unknown) => error);
    expect(badBody).toBeInstanceOf(OpenAI.BadRequestError);
    expect((badBody as InstanceType<typeof OpenAI.BadRequestError>).param).toBe('messages');

    const clash = await client()
      .chat.completions.create({
        model: defaultModel(),
        messages: [{ role: 'user', content: 'hi' }],
        tools: [{ type: 'function', function: { name: 'add_numbers' } }],
      })
      .catch((error: unknown) => error);
    expect(clash).toBeInstanceOf(OpenAI.BadRequestError);
    expect((clash as InstanceType<typeof OpenAI.BadRequestError>).param).toBe('tools');
    expect((clash as Error).message).toContain('add_numbers');

    const strangers = await client('user_001', { 'x-conversation-id': randomUUID() })
      .chat.completions.create({ model: defaultModel(), messages: [{ role: 'user', content: 'hi' }] })
      .catch((error: unknown) => error);
    expect(strangers).toBeInstanceOf(OpenAI.NotFoundError);
    const malformed = await client('user_001', { 'x-conversation-id': '../x' })
      .chat.completions.create({ model: defaultModel(), messages: [{ role: 'user', content: 'hi' }] })
      .catch((error: unknown) => error);
    expect((malformed as InstanceType<typeof OpenAI.BadRequestError>).param).toBe('x-conversation-id');

    const anonymous = await new OpenAI({
      baseURL: `${runtime.url}/api/v1`,
      apiKey: 'x',
      maxRetries: 0,
    }).models
      .list()
      .catch((error: unknown) => error);
    expect(anonymous).toBeInstanceOf(OpenAI.AuthenticationError);

    const long = await client()
      .chat.completions.create({
        model: defaultModel(),
        messages: [{ role: 'user', content: 'x'.repeat(runtime.app.config.chat.maxTextChars + 1) }],
      })
      .catch((error: unknown) => error);
    expect((long as InstanceType<typeof OpenAI.BadRequestError>).param).toBe('messages');
    expect((long as Error).message).toContain('CHAT_MAX_TEXT_CHARS');

    const large = await client()
      .chat.completions.create({
        model: defaultModel(),
        messages: [{ role: 'user', content: 'x'.repeat(200 * 1024) }],
      })
      .catch((error: unknown) => error);
    expect(large).toBeInstanceOf(OpenAI.APIError);
    expect((large as InstanceType<typeof OpenAI.APIError>).status).toBe(413);
    expect((large as InstanceType<typeof OpenAI.APIError>).type).toBe('invalid_request_error');
  }, 30_000);
});
