// The gateway with LLM_API=responses, through the real openai client and a scripted fetch: what it sends (route,
// auth, input, tools, reasoning), JSON output, cancellation, and that embeddings and Chat Completions are untouched.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { LLM_WIRE_DIR, scriptedFetch } from '../../../test/support/llm-wire-replay.js';
import { LlmError, type LlmConnection } from '../llm-gateway.js';
import { createLlmGateway } from './openai-gateway.js';

const encoder = new TextEncoder();
const fixture = (name: string) => new Uint8Array(readFileSync(join(LLM_WIRE_DIR, name)));
const sse = (chunks: Uint8Array[]) => ({ headers: { 'content-type': 'text/event-stream' }, chunks });

const openAi: LlmConnection = {
  kind: 'openai-compatible',
  baseUrl: 'http://llm.test/v1',
  chatModel: 'chat-model',
  embeddingModel: 'embedding-model',
  api: 'responses',
};
const azure: Extract<LlmConnection, { kind: 'azure-openai' }> = {
  kind: 'azure-openai',
  endpoint: 'https://example.openai.azure.com/',
  chatDeployment: 'chat-dep',
  embeddingDeployment: 'embed-dep',
  api: 'responses',
};

const turn = {
  messages: [
    { role: 'system' as const, content: 'You are a helpful assistant' },
    { role: 'user' as const, content: "What's the weather in Florence, Italy?" },
    {
      role: 'assistant' as const,
      content: '',
      tool_calls: [
        { id: 'call_ylSv4Nh5Sjuh7A6vOintVfwF', name: 'weather', arguments: '{"location":"Florence"}' },
      ],
    },
    { role: 'tool' as const, tool_call_id: 'call_ylSv4Nh5Sjuh7A6vOintVfwF', content: '40 C' },
  ],
  tools: [{ name: 'weather', description: 'Get weather information', parameters: { type: 'object' } }],
  maxTokens: 4,
};

describe('Responses API requests', () => {
  it('go to Azure v1 /openai/v1/responses with an Entra ID bearer token and no api-version', async () => {
    const { fetch, requests } = scriptedFetch([
      sse([fixture('azure-openai-responses-reasoning-summary.sse')]),
      { chunks: [fixture('azure-openai-embeddings.body')] },
    ]);
    let tokens = 0;
    const gateway = createLlmGateway(
      { ...azure, reasoningEffort: 'high' },
      {
        maxRetries: 0,
        timeoutMs: 5_000,
        fetch,
        azureAdTokenProvider: () => Promise.resolve(`token-${++tokens}`),
      },
    );

    const reply = await gateway.streamChat(turn);
    expect(reply.reasoningParts).toHaveLength(3);

    expect(requests[0]?.url).toBe('https://example.openai.azure.com/openai/v1/responses');
    expect(requests[0]?.headers.get('authorization')).toBe('Bearer token-1');
    expect(requests[0]?.headers.get('api-key')).toBeNull();
    // The body the recorded Azure request had, in the app's words.
    expect(requests[0]?.body).toEqual({
      model: 'chat-dep',
      instructions: 'You are a helpful assistant',
      input: [
        { role: 'user', content: "What's the weather in Florence, Italy?" },
        {
          type: 'function_call',
          call_id: 'call_ylSv4Nh5Sjuh7A6vOintVfwF',
          name: 'weather',
          arguments: '{"location":"Florence"}',
        },
        { type: 'function_call_output', call_id: 'call_ylSv4Nh5Sjuh7A6vOintVfwF', output: '40 C' },
      ],
      stream: true,
      store: false,
      tools: [
        {
          type: 'function',
          name: 'weather',
          description: 'Get weather information',
          parameters: { type: 'object' },
          strict: false,
        },
      ],
      tool_choice: 'auto',
      // The API refuses a cap below 16.
      max_output_tokens: 16,
      reasoning: { effort: 'high', summary: 'auto' },
    });

    // Embeddings take the same v1 route, with the same token provider.
    await gateway.embed(['x']).catch(() => undefined);
    expect(requests[1]?.url).toBe('https://example.openai.azure.com/openai/v1/embeddings');
    expect(requests[1]?.headers.get('authorization')).toBe('Bearer token-2');
  });

  it('send an Azure API key on the v1 route as the OpenAI client does, and no reasoning by default', async () => {
    const { fetch, requests } = scriptedFetch([sse([fixture('azure-openai-responses-toolcall.sse')])]);
    const gateway = createLlmGateway(
      { ...azure, apiKey: 'test-key' },
      { maxRetries: 0, timeoutMs: 5_000, fetch },
    );
    const reply = await gateway.streamChat({ ...turn, toolChoice: 'none', maxTokens: 100 });
    expect(reply.toolCalls).toEqual([
      { id: 'call_zLPcxu60T5jzGjuiRIvlkoSt', name: 'weather', arguments: '{"location":"Florence, Italy"}' },
    ]);
    expect(requests[0]?.url).toBe('https://example.openai.azure.com/openai/v1/responses');
    expect(requests[0]?.headers.get('authorization')).toBe('Bearer test-key');
    expect(requests[0]?.body).toMatchObject({ tool_choice: 'none', max_output_tokens: 100 });
    expect(requests[0]?.body).not.toHaveProperty('reasoning');
  });

  it('fail fast when Azure has neither a key nor a credential', () => {
    expect(() => createLlmGateway(azure, { maxRetries: 0, timeoutMs: 1 })).toThrow(/no API key .* Entra ID/);
  });

  it('resolve with what arrived when the caller cancels, and do not retry a cut stream silently', async () => {
    const bytes = fixture('azure-openai-responses-reasoning-summary.sse');
    // Up to the second summary part: the first part is done, the stream stays open (as a slow model's does).
    const firstPart = bytes.slice(0, 30_017);
    const { fetch } = scriptedFetch([{ ...sse([firstPart]), hang: true }, sse([firstPart])]);
    const gateway = createLlmGateway(openAi, { maxRetries: 0, timeoutMs: 5_000, fetch });
    const controller = new AbortController();
    const cancelled = await gateway.streamChat({ messages: [], signal: controller.signal }, (delta) => {
      if (delta.type === 'reasoning-end') controller.abort();
    });
    expect(cancelled.finishReason).toBe('cancelled');
    expect(cancelled.reasoningParts).toHaveLength(1);
    expect(cancelled.content).toBe('');

    // The same bytes without a terminal event: the connection was cut.
    const cut = (await gateway.streamChat({ messages: [] }).catch((e: unknown) => e)) as LlmError;
    expect(cut).toBeInstanceOf(LlmError);
    expect(cut.message).toMatch(/ended the stream before/);
    expect(cut.retryable).toBe(true);
  });

  it('report a retryable in-band server error', async () => {
    const body = encoder.encode(
      'event: error\ndata: {"type":"error","sequence_number":0,"code":"server_error","message":"overloaded","param":null}\n\n' +
        'event: response.failed\ndata: {"type":"response.failed","sequence_number":1,"response":{"status":"failed","error":{"code":"server_error","message":"overloaded"},"output":[],"usage":null}}\n\n',
    );
    const { fetch } = scriptedFetch([sse([body])]);
    const gateway = createLlmGateway(openAi, { maxRetries: 0, timeoutMs: 5_000, fetch });
    const error = (await gateway.streamChat({ messages: [] }).catch((e: unknown) => e)) as LlmError;
    expect(error).toBeInstanceOf(LlmError);
    expect(error).toMatchObject({ providerCode: 'server_error', retryable: true });
    expect(error.message).toContain('overloaded');
  });
});

describe('connection failures on the Responses API', () => {
  it('name an unreachable endpoint as Chat Completions does, not as an in-band error', async () => {
    const fetch = (() =>
      Promise.reject(
        new TypeError('fetch failed', { cause: new Error('ECONNREFUSED') }),
      )) as typeof globalThis.fetch;
    const gateway = createLlmGateway(openAi, { maxRetries: 0, timeoutMs: 5_000, fetch });
    const error = (await gateway.streamChat({ messages: [] }).catch((e: unknown) => e)) as LlmError;
    expect(error.message).toMatch(/Cannot reach LLM endpoint http:\/\/llm\.test\/v1.*ECONNREFUSED/);
    expect(error.retryable).toBe(true);
  });
});

describe('completeJson over the Responses API', () => {
  const schema = z.object({ title: z.string().min(3), tags: z.array(z.string()) });
  const response = (text: string, status = 'completed') =>
    encoder.encode(
      JSON.stringify({
        id: 'resp_1',
        object: 'response',
        status,
        model: 'chat-model',
        output: [
          { type: 'reasoning', id: 'rs_1', summary: [] },
          {
            type: 'message',
            id: 'msg_1',
            role: 'assistant',
            status: 'completed',
            content: [{ type: 'output_text', text, annotations: [] }],
          },
        ],
        usage: { input_tokens: 3, output_tokens: 5, total_tokens: 8 },
      }),
    );

  it('asks for the json_schema format in text.format, and once for a correction', async () => {
    const { fetch, requests } = scriptedFetch([
      { chunks: [response('{"title":"x","tags":[]}')] },
      { chunks: [response('{"title":"Trip to Rome","tags":["travel"]}')] },
    ]);
    const gateway = createLlmGateway(openAi, { maxRetries: 0, timeoutMs: 5_000, fetch });
    const value = await gateway.completeJson({
      messages: [
        { role: 'system', content: 'Title the conversation.' },
        { role: 'user', content: 'title?' },
      ],
      schema,
      name: 'title',
    });
    expect(value).toEqual({ title: 'Trip to Rome', tags: ['travel'] });
    expect(requests[0]?.url).toBe('http://llm.test/v1/responses');
    expect(requests[0]?.body).toMatchObject({
      model: 'chat-model',
      instructions: 'Title the conversation.',
      input: [{ role: 'user', content: 'title?' }],
      store: false,
      stream: false,
      text: {
        format: {
          type: 'json_schema',
          name: 'title',
          strict: true,
          schema: { type: 'object', required: ['title', 'tags'] },
        },
      },
    });
    expect(requests[0]?.body).not.toHaveProperty('reasoning');
    const retry = requests[1]?.body['input'] as { role: string; content: string }[];
    expect(retry.slice(1).map((item) => item.role)).toEqual(['assistant', 'user']);
    expect(retry.at(-1)?.content).toMatch(/title: Too small/);
  });

  it('says when the answer was cut, a refusal, or a failed response', async () => {
    const refusal = encoder.encode(
      JSON.stringify({
        object: 'response',
        status: 'completed',
        output: [
          { type: 'message', id: 'm', role: 'assistant', content: [{ type: 'refusal', refusal: 'No.' }] },
        ],
      }),
    );
    const failed = encoder.encode(
      JSON.stringify({
        object: 'response',
        status: 'failed',
        error: { code: 'invalid_prompt', message: 'Bad prompt.' },
        output: [],
      }),
    );
    const { fetch } = scriptedFetch([
      { chunks: [response('{"title":"Tr', 'incomplete')] },
      { chunks: [response('{"title":"Tr', 'incomplete')] },
      { chunks: [refusal] },
      { chunks: [failed] },
    ]);
    const gateway = createLlmGateway(openAi, { maxRetries: 0, timeoutMs: 5_000, fetch });
    const ask = () => gateway.completeJson({ messages: [], schema, name: 'title' });
    await expect(ask()).rejects.toThrow(/unusable "title" JSON \(the answer was cut at the token limit\)/);
    await expect(ask()).rejects.toThrow(/refused to produce "title": No\./);
    await expect(ask()).rejects.toMatchObject({ providerCode: 'invalid_prompt', retryable: false });
  });
});
