// The official `openai` package's Responses client against POST /api/v1/responses on the local runtime: a response,
// its stream of events, and previous_response_id continuing its conversation.
import OpenAI from 'openai';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalRuntime } from '../../local/runtime.js';
import { devOpenAiClient, lastUser, startOpenAiRuntime } from '../support/openai-client.js';
import type { ScriptedModel } from '../support/scripted-model.js';

describe('the Responses API, read by the openai package', () => {
  let runtime: LocalRuntime;
  let model: ScriptedModel;

  beforeAll(async () => {
    ({ runtime, model } = await startOpenAiRuntime((request) => {
      const last = request.messages.at(-1);
      if (last?.role === 'tool') return { content: `The weather: ${last.content ?? ''}` };
      if ((request.tools ?? []).some((tool) => tool.function.name === 'get_weather'))
        return { toolCalls: [{ name: 'get_weather', arguments: '{"city":"Oslo"}' }] };
      return { content: `Echo: ${lastUser(request)}` };
    }));
  }, 60_000);

  afterAll(async () => {
    await runtime?.stop();
    await model?.close();
  }, 60_000);

  const client = (userId = 'user_001') => devOpenAiClient(runtime, userId);
  const defaultModel = () => runtime.app.config.models.defaultModel;
  const requestFor = (text: string) => model.requests.find((request) => lastUser(request) === text);

  it('answers a response, and continues its conversation from previous_response_id', async () => {
    const first = `My name is Ada ${randomUUID()}`;
    const response = await client().responses.create({
      model: defaultModel(),
      instructions: 'Be brief.',
      input: first,
    });
    expect(response.id).toMatch(/^resp_/);
    expect(response.status).toBe('completed');
    expect(response.output_text).toBe(`Echo: ${first}`);
    expect(response.usage?.total_tokens).toBeGreaterThan(0);
    expect(
      requestFor(first)
        ?.messages.slice(-2)
        .map((m) => m.content),
    ).toEqual(['Be brief.', first]);

    const second = `What is my name? ${randomUUID()}`;
    const next = await client().responses.create({
      model: defaultModel(),
      input: second,
      previous_response_id: response.id,
    });
    expect(next.output_text).toBe(`Echo: ${second}`);
    expect(next.previous_response_id).toBe(response.id);
    const sent = requestFor(second)?.messages.map((m) => m.content) ?? [];
    expect(sent).toContain(first);
    expect(sent).toContain(`Echo: ${first}`);
    // Another user cannot continue it.
    const stranger = await client('user_002')
      .responses.create({ model: defaultModel(), input: 'hi', previous_response_id: response.id })
      .catch((error: unknown) => error);
    expect(stranger).toBeInstanceOf(OpenAI.NotFoundError);
    expect((stranger as InstanceType<typeof OpenAI.NotFoundError>).code).toBe('previous_response_not_found');
  }, 30_000);

  it('follows the branch of an older response it is told to continue from', async () => {
    const ask = (input: string, previous?: string) =>
      client().responses.create({
        model: defaultModel(),
        input,
        ...(previous === undefined ? {} : { previous_response_id: previous }),
      });
    const a = `First ${randomUUID()}`;
    const b = `Second ${randomUUID()}`;
    const c = `Instead ${randomUUID()}`;
    const first = await ask(a);
    const second = await ask(b, first.id);
    const instead = await ask(c, first.id);
    expect(instead.output_text).toBe(`Echo: ${c}`);
    const sent = requestFor(c)?.messages.map((m) => m.content) ?? [];
    expect(sent).toContain(a);
    expect(sent).not.toContain(b);
    // The new branch goes on from its own response; the old one is still there to go back to.
    const after = `After ${randomUUID()}`;
    await ask(after, instead.id);
    const onBranch = requestFor(after)?.messages.map((m) => m.content) ?? [];
    expect(onBranch).toEqual(expect.arrayContaining([a, c]));
    expect(onBranch).not.toContain(b);
    expect(second.id).not.toBe(instead.id);
  }, 30_000);

  it('hands a function call back and goes on from its output and previous_response_id', async () => {
    const tools: OpenAI.Responses.Tool[] = [
      {
        type: 'function',
        name: 'get_weather',
        parameters: { type: 'object', properties: {} },
        strict: false,
      },
    ];
    const question = `Weather in Oslo? ${randomUUID()}`;
    const asked = await client().responses.create({ model: defaultModel(), input: question, tools });
    const call = asked.output.find((item) => item.type === 'function_call');
    expect(call?.type === 'function_call' && call.name).toBe('get_weather');
    const answerCalls = (userId?: string) =>
      client(userId).responses.create({
        model: defaultModel(),
        previous_response_id: asked.id,
        input: [
          {
            type: 'function_call_output',
            call_id: call?.type === 'function_call' ? call.call_id : '',
            output: 'snow',
          },
        ],
        tools,
      });
    // Another user's results for the calls find no response of theirs, as any stranger's previous_response_id.
    const stranger = await answerCalls('user_002').catch((error: unknown) => error);
    expect(stranger).toBeInstanceOf(OpenAI.NotFoundError);
    expect((stranger as InstanceType<typeof OpenAI.NotFoundError>).code).toBe('previous_response_not_found');
    const answer = await answerCalls();
    expect(answer.output_text).toBe('The weather: snow');
    const sent = model.requests.find((request) => request.messages.at(-1)?.content === 'snow');
    expect(sent?.messages.slice(-3).map((message) => message.role)).toEqual(['user', 'assistant', 'tool']);
    expect(sent?.messages.at(-3)?.content).toBe(question);
  }, 30_000);

  it('streams a response as its events', async () => {
    const text = `Stream this ${randomUUID()}`;
    const stream = await client().responses.create({ model: defaultModel(), input: text, stream: true });
    const types: string[] = [];
    let deltas = '';
    let completed: OpenAI.Responses.Response | undefined;
    for await (const event of stream) {
      types.push(event.type);
      if (event.type === 'response.output_text.delta') deltas += event.delta;
      if (event.type === 'response.completed') completed = event.response;
    }
    expect(deltas).toBe(`Echo: ${text}`);
    expect(types[0]).toBe('response.created');
    expect(types.at(-1)).toBe('response.completed');
    expect(completed?.status).toBe('completed');
    const item = completed?.output[0];
    expect(item?.type === 'message' && item.content[0]?.type === 'output_text' && item.content[0].text).toBe(
      `Echo: ${text}`,
    );
  }, 30_000);

  it('refuses a previous_response_id that is not one of its responses', async () => {
    const unknown = await client()
      .responses.create({ model: defaultModel(), input: 'hi', previous_response_id: 'resp_nothing' })
      .catch((error: unknown) => error);
    expect(unknown).toBeInstanceOf(OpenAI.NotFoundError);
    expect((unknown as InstanceType<typeof OpenAI.NotFoundError>).code).toBe('previous_response_not_found');
  }, 30_000);
});
