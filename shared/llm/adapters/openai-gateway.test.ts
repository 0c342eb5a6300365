// Replays recorded provider streams through the real openai client (an injected fetch serves the exact
// bytes, cut at arbitrary offsets) and checks errors, retries, Azure routing and cancellation.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import {
  cutsInsideDataPrefix,
  cutsInsideUtf8,
  everyOffset,
  LLM_WIRE_DIR as fixturesDir,
  randomCuts,
  scriptedFetch,
  splitAt,
} from '../../../test/support/llm-wire-replay.js';
import { azureWithKey, openAiCompatible } from '../../../test/support/llm-connections.js';
import { DependencyError } from '../../errors.js';
import { LlmError, type LlmDelta, type LlmUsage } from '../llm-gateway.js';
import { createLlmGateway } from './openai-gateway.js';

const encoder = new TextEncoder();

interface Sidecar {
  expected_text: string;
  expected_reasoning?: string;
  expected_tool_calls: { name: string; arguments: string }[];
  expected_tool_call_ids?: string[];
  expected_finish_reason?: string;
  expected_usage?: Record<string, unknown> | null;
  expected_embedding?: { dimensions: number; first_4_floats: number[]; count: number };
  expected_error?: { http_status: number; code: string; message_prefix: string };
}

function readSidecar(name: string): Sidecar {
  return JSON.parse(readFileSync(join(fixturesDir, `${name}.json`), 'utf8')) as Sidecar;
}

function expectedUsage(raw: Record<string, unknown> | null | undefined): LlmUsage | undefined {
  if (!raw) return undefined;
  const completionDetails = raw['completion_tokens_details'] as Record<string, number> | undefined;
  const promptDetails = raw['prompt_tokens_details'] as Record<string, number> | null | undefined;
  const usage: LlmUsage = {
    promptTokens: raw['prompt_tokens'] as number,
    completionTokens: raw['completion_tokens'] as number,
    totalTokens: raw['total_tokens'] as number,
  };
  const reasoning =
    completionDetails?.['reasoning_tokens'] ?? (raw['reasoning_tokens'] as number | undefined);
  if (reasoning !== undefined) usage.reasoningTokens = reasoning;
  if (promptDetails?.['cached_tokens'] !== undefined)
    usage.cachedPromptTokens = promptDetails['cached_tokens'];
  return usage;
}

// ---- replay of every recorded stream -------------------------------------------------------------

// The Responses API streams have their own replay (openai-responses-replay.test.ts).
const sseFixtures = readdirSync(fixturesDir)
  .filter((file) => file.endsWith('.sse') && !file.includes('-responses-'))
  .map((file) => file.slice(0, -'.sse'.length));

const SEEDS = [1, 7, 42, 1337, 20240926];

describe('replay of recorded Chat Completions streams through the real openai client', () => {
  it('covers every .sse fixture', () => {
    expect(sseFixtures.length).toBeGreaterThanOrEqual(9);
  });

  for (const name of sseFixtures) {
    describe(name, () => {
      const bytes = new Uint8Array(readFileSync(join(fixturesDir, `${name}.sse`)));
      const sidecar = readSidecar(name);
      const splits: { label: string; cuts: number[] }[] = [
        { label: 'one piece', cuts: [] },
        ...SEEDS.map((seed) => ({ label: `seed ${seed}`, cuts: randomCuts(bytes.length, seed, 24) })),
        { label: '1-byte chunks', cuts: everyOffset(bytes.length) },
      ];

      it('the random splits cut inside `data: ` and, where the stream has any, inside UTF-8 characters', () => {
        const randomSplits = splits.filter((split) => split.label.startsWith('seed'));
        const insidePrefix = randomSplits.reduce((n, s) => n + cutsInsideDataPrefix(bytes, s.cuts), 0);
        expect(insidePrefix).toBeGreaterThan(0);
        const hasMultiByte = bytes.some((byte) => byte >= 0x80);
        const insideUtf8 = randomSplits.reduce((n, s) => n + cutsInsideUtf8(bytes, s.cuts), 0);
        if (hasMultiByte) expect(insideUtf8).toBeGreaterThan(0);
      });

      for (const split of splits) {
        it(`assembles the sidecar's expected values (${split.label})`, async () => {
          const { fetch, requests } = scriptedFetch([
            { headers: { 'content-type': 'text/event-stream' }, chunks: splitAt(bytes, split.cuts) },
          ]);
          const gateway = createLlmGateway(openAiCompatible, { maxRetries: 0, timeoutMs: 5_000, fetch });
          const deltas: LlmDelta[] = [];
          const result = await gateway.streamChat({ messages: [{ role: 'user', content: 'hi' }] }, (delta) =>
            deltas.push(delta),
          );

          expect(result.content).toBe(sidecar.expected_text);
          expect(result.reasoning).toBe(sidecar.expected_reasoning ?? '');
          expect(result.toolCalls.map(({ name, arguments: args }) => ({ name, arguments: args }))).toEqual(
            sidecar.expected_tool_calls,
          );
          expect(result.toolCalls.map((call) => call.id)).toEqual(sidecar.expected_tool_call_ids ?? []);
          expect(result.finishReason).toBe(sidecar.expected_finish_reason);
          expect(result.usage).toEqual(expectedUsage(sidecar.expected_usage));
          expect(result.model).toMatch(/.+/);

          // The deltas tell the same story as the result, in order.
          const text = (type: 'content' | 'reasoning') =>
            deltas.flatMap((d) => (d.type === type ? [d.text] : [])).join('');
          expect(text('content')).toBe(result.content);
          expect(text('reasoning')).toBe(result.reasoning);
          expect(deltas.flatMap((d) => (d.type === 'tool-call' ? [[d.index, d.id, d.name]] : []))).toEqual(
            result.toolCalls.map((call, index) => [index, call.id, call.name]),
          );

          expect(requests[0]?.url).toBe('http://llm.test/v1/chat/completions');
          expect(requests[0]?.body).toMatchObject({
            model: 'chat-model',
            stream: true,
            stream_options: { include_usage: true },
          });
        });
      }
    });
  }
});

// ---- errors, retries ----------------------------------------------------------------------------

describe('errors and retries', () => {
  it('maps the Azure 401 envelope to a DependencyError with the provider status and message', async () => {
    const sidecar = readSidecar('azure-openai-error-401');
    const body = new Uint8Array(readFileSync(join(fixturesDir, 'azure-openai-error-401.body')));
    const { fetch, requests } = scriptedFetch([
      { status: 401, headers: { 'content-type': 'application/json' }, chunks: [body] },
    ]);
    const gateway = createLlmGateway(azureWithKey, { maxRetries: 2, timeoutMs: 5_000, fetch });

    const error = await gateway
      .streamChat({ messages: [{ role: 'user', content: 'hi' }] })
      .catch((e: unknown) => e);

    expect(error).toBeInstanceOf(DependencyError);
    expect(error).toBeInstanceOf(LlmError);
    const llmError = error as LlmError;
    expect(llmError.providerStatus).toBe(sidecar.expected_error!.http_status);
    expect(llmError.providerCode).toBe(sidecar.expected_error!.code);
    expect(llmError.retryable).toBe(false);
    expect(llmError.dependency).toBe('llm');
    expect(llmError.message).toContain('HTTP 401');
    expect(llmError.message).toContain(sidecar.expected_error!.message_prefix);
    expect(llmError.message).toContain('Cognitive Services OpenAI User');
    expect(requests).toHaveLength(1); // a 401 is not retried
  });

  // Fake timers make the wait observable without sleeping: the retry must come exactly when the server said.
  it('retries a 429 after the retry-after-ms the server asked for, then streams the answer', async () => {
    const sse = new Uint8Array(readFileSync(join(fixturesDir, 'ollama-openai-compat-text.sse')));
    const rateLimited = encoder.encode(
      '{"error":{"code":"429","message":"Requests have exceeded the rate limit. Please retry after 30 seconds."}}',
    );
    const { fetch, requests } = scriptedFetch([
      {
        status: 429,
        headers: { 'retry-after-ms': '30000', 'content-type': 'application/json' },
        chunks: [rateLimited],
      },
      { headers: { 'content-type': 'text/event-stream' }, chunks: [sse] },
    ]);
    const gateway = createLlmGateway(openAiCompatible, { maxRetries: 2, timeoutMs: 120_000, fetch });

    vi.useFakeTimers();
    try {
      const answer = gateway.streamChat({ messages: [{ role: 'user', content: 'what is your name?' }] });
      await vi.advanceTimersByTimeAsync(29_999);
      expect(requests).toHaveLength(1);
      await vi.advanceTimersByTimeAsync(1);
      const result = await answer;
      expect(result.content).toBe('My name is Neo Vim.');
      expect(requests).toHaveLength(2);
    } finally {
      vi.useRealTimers();
    }
  });

  it('honours retry-after in seconds as well', async () => {
    const { fetch, requests } = scriptedFetch([
      {
        status: 503,
        headers: { 'retry-after': '20' },
        chunks: [encoder.encode('{"error":{"message":"busy"}}')],
      },
      {
        chunks: [
          encoder.encode('{"object":"list","data":[{"object":"embedding","index":0,"embedding":[0.5]}]}'),
        ],
      },
    ]);
    const gateway = createLlmGateway(openAiCompatible, { maxRetries: 1, timeoutMs: 120_000, fetch });
    vi.useFakeTimers();
    try {
      const embedded = gateway.embed(['x']);
      await vi.advanceTimersByTimeAsync(19_999);
      expect(requests).toHaveLength(1);
      await vi.advanceTimersByTimeAsync(1);
      expect(await embedded).toEqual([[0.5]]);
      expect(requests).toHaveLength(2);
    } finally {
      vi.useRealTimers();
    }
  });

  it('gives up after maxRetries with a retryable LlmError carrying the 429', async () => {
    const body = () =>
      encoder.encode('{"error":{"code":"RateLimitReached","message":"Please retry after 1 second."}}');
    const { fetch, requests } = scriptedFetch([
      { status: 429, headers: { 'retry-after-ms': '1' }, chunks: [body()] },
      { status: 429, headers: { 'retry-after-ms': '1' }, chunks: [body()] },
    ]);
    const gateway = createLlmGateway(openAiCompatible, { maxRetries: 1, timeoutMs: 5_000, fetch });
    const error = (await gateway.embed(['x']).catch((e: unknown) => e)) as LlmError;
    expect(error).toBeInstanceOf(LlmError);
    expect(error.providerStatus).toBe(429);
    expect(error.providerCode).toBe('RateLimitReached');
    expect(error.retryable).toBe(true);
    expect(error.message).toContain('Please retry after 1 second.');
    expect(requests).toHaveLength(2);
  });

  it('says a spent quota (HTTP 429 insufficient_quota) is not worth retrying later', async () => {
    const body = encoder.encode(
      '{"error":{"message":"You exceeded your current quota, please check your plan and billing details.","type":"insufficient_quota","param":null,"code":"insufficient_quota"}}',
    );
    const { fetch } = scriptedFetch([
      { status: 429, headers: { 'x-should-retry': 'false' }, chunks: [body] },
    ]);
    const gateway = createLlmGateway(openAiCompatible, { maxRetries: 2, timeoutMs: 5_000, fetch });
    const error = (await gateway.embed(['x']).catch((e: unknown) => e)) as LlmError;
    expect(error).toBeInstanceOf(LlmError);
    expect(error.providerStatus).toBe(429);
    expect(error.providerCode).toBe('insufficient_quota');
    expect(error.retryable).toBe(false);
    expect(error.message).toContain('quota is spent');
  });

  it('reports an error event inside the stream', async () => {
    const sse = encoder.encode(
      'data: {"choices":[{"index":0,"delta":{"content":"par"}}]}\n\ndata: {"error":{"message":"upstream overloaded","type":"server_error"}}\n\n',
    );
    const { fetch } = scriptedFetch([{ chunks: [sse] }]);
    const gateway = createLlmGateway(openAiCompatible, { maxRetries: 0, timeoutMs: 5_000, fetch });
    const error = (await gateway.streamChat({ messages: [] }).catch((e: unknown) => e)) as LlmError;
    expect(error).toBeInstanceOf(LlmError);
    expect(error.message).toContain('upstream overloaded');
    expect(error.providerStatus).toBeUndefined();
  });

  it('refuses a stream that ends without a finish_reason (a cut connection)', async () => {
    const sse = encoder.encode('data: {"choices":[{"index":0,"delta":{"content":"Half an ans"}}]}\n\n');
    const { fetch } = scriptedFetch([{ chunks: [sse] }]);
    const gateway = createLlmGateway(openAiCompatible, { maxRetries: 0, timeoutMs: 5_000, fetch });
    await expect(gateway.streamChat({ messages: [] })).rejects.toThrow(/ended the stream before/);
  });

  it('gives up on a stream that stays silent longer than timeoutMs', async () => {
    const sse = encoder.encode('data: {"choices":[{"index":0,"delta":{"content":"Hel"}}]}\n\n');
    const { fetch } = scriptedFetch([{ chunks: [sse], hang: true }]);
    const gateway = createLlmGateway(openAiCompatible, { maxRetries: 0, timeoutMs: 50, fetch });
    const error = (await gateway.streamChat({ messages: [] }).catch((e: unknown) => e)) as LlmError;
    expect(error).toBeInstanceOf(LlmError);
    expect(error.message).toMatch(/stopped streaming for 50 ms/);
    expect(error.retryable).toBe(true);
  });

  it('says so when the endpoint is not an OpenAI-style API', async () => {
    const page = encoder.encode('<html>Sign in</html>');
    const { fetch } = scriptedFetch([{ headers: { 'content-type': 'text/html' }, chunks: [page] }]);
    const gateway = createLlmGateway(openAiCompatible, { maxRetries: 0, timeoutMs: 5_000, fetch });
    await expect(gateway.embed(['x'])).rejects.toThrow(/not answer with an OpenAI-style embeddings list/);
  });

  it('names an unreachable endpoint', async () => {
    const fetch = (() =>
      Promise.reject(
        new TypeError('fetch failed', { cause: new Error('ECONNREFUSED') }),
      )) as typeof globalThis.fetch;
    const gateway = createLlmGateway(openAiCompatible, { maxRetries: 0, timeoutMs: 5_000, fetch });
    const error = (await gateway.embed(['x']).catch((e: unknown) => e)) as LlmError;
    expect(error.message).toMatch(/Cannot reach LLM endpoint http:\/\/llm\.test\/v1.*ECONNREFUSED/);
    expect(error.retryable).toBe(true);
  });
});

describe('cancellation', () => {
  it('resolves with what arrived so far and finishReason "cancelled"', async () => {
    const sse = encoder.encode(
      'data: {"choices":[{"index":0,"delta":{"role":"assistant","content":""}}]}\n\n' +
        'data: {"choices":[{"index":0,"delta":{"content":"Partial"}}]}\n\n',
    );
    const { fetch } = scriptedFetch([{ chunks: [sse], hang: true }]);
    const gateway = createLlmGateway(openAiCompatible, { maxRetries: 0, timeoutMs: 5_000, fetch });
    const controller = new AbortController();
    const result = await gateway.streamChat({ messages: [], signal: controller.signal }, (delta) => {
      if (delta.type === 'content') controller.abort();
    });
    expect(result).toMatchObject({ content: 'Partial', finishReason: 'cancelled' });
  });

  it('does not call the endpoint when the signal is already aborted', async () => {
    const { fetch, requests } = scriptedFetch([]);
    const gateway = createLlmGateway(openAiCompatible, { maxRetries: 0, timeoutMs: 5_000, fetch });
    const result = await gateway.streamChat({ messages: [], signal: AbortSignal.abort() });
    expect(result).toMatchObject({ content: '', finishReason: 'cancelled' });
    expect(requests).toHaveLength(0);
  });

  it('lets an exception from onDelta escape unchanged', async () => {
    const sse = new Uint8Array(readFileSync(join(fixturesDir, 'ollama-openai-compat-text.sse')));
    const { fetch } = scriptedFetch([{ chunks: [sse] }]);
    const gateway = createLlmGateway(openAiCompatible, { maxRetries: 0, timeoutMs: 5_000, fetch });
    const boom = new RangeError('publisher failed');
    await expect(
      gateway.streamChat({ messages: [] }, () => {
        throw boom;
      }),
    ).rejects.toBe(boom);
  });
});

describe('Azure OpenAI routing and auth', () => {
  it('uses Entra ID bearer tokens on the v1 route, with no api-version, when no key is configured', async () => {
    const sse = new Uint8Array(readFileSync(join(fixturesDir, 'azure-openai-v1-chat-toolcalls.sse')));
    const { fetch, requests } = scriptedFetch([{ chunks: [sse] }]);
    const { apiKey: _apiKey, ...entra } = azureWithKey;
    let tokenRequests = 0;
    const gateway = createLlmGateway(entra, {
      maxRetries: 0,
      timeoutMs: 5_000,
      fetch,
      azureAdTokenProvider: () => Promise.resolve(`token-${++tokenRequests}`),
    });

    const result = await gateway.streamChat({
      messages: [{ role: 'user', content: "What's the weather in Florence,Italy?" }],
      tools: [{ name: 'weather', description: 'Get weather information', parameters: { type: 'object' } }],
      toolChoice: 'none',
      maxTokens: 50,
    });

    expect(result.toolCalls[0]).toMatchObject({
      name: 'weather',
      arguments: '{"location":"Florence, Italy"}',
    });
    expect(requests[0]?.url).toBe('https://example.openai.azure.com/openai/v1/chat/completions');
    expect(requests[0]?.headers.get('authorization')).toBe('Bearer token-1');
    expect(requests[0]?.headers.get('api-key')).toBeNull();
    expect(new URL(requests[0]!.url).searchParams.has('api-version')).toBe(false);
    expect(requests[0]?.body).toMatchObject({
      model: 'chat-dep',
      max_completion_tokens: 50,
      tools: [{ type: 'function', function: { name: 'weather' } }],
      tool_choice: 'none',
    });
  });

  it('fails fast with an LlmError when the connection cannot make a client, and treats an empty key as none', () => {
    const { apiKey: _apiKey, ...entra } = azureWithKey;
    expect(() => createLlmGateway(entra, { maxRetries: 0, timeoutMs: 1 })).toThrow(LlmError);
    expect(() => createLlmGateway(entra, { maxRetries: 0, timeoutMs: 1 })).toThrow(/no API key .* Entra ID/);
    expect(() =>
      createLlmGateway({ ...openAiCompatible, apiKey: '' }, { maxRetries: 0, timeoutMs: 1 }),
    ).not.toThrow();
  });

  it('explains a failing token provider', async () => {
    const { fetch, requests } = scriptedFetch([]);
    const { apiKey: _apiKey, ...entra } = azureWithKey;
    const gateway = createLlmGateway(entra, {
      maxRetries: 0,
      timeoutMs: 5_000,
      fetch,
      azureAdTokenProvider: () => Promise.reject(new Error('no credential')),
    });
    await expect(gateway.embed(['x'])).rejects.toThrow(/no credential/);
    expect(requests).toHaveLength(0);
  });
});

describe('reasoning effort on Chat Completions', () => {
  it('is left out unless LLM_REASONING_EFFORT asks for one, and then sent as reasoning_effort', async () => {
    const sse = new Uint8Array(readFileSync(join(fixturesDir, 'ollama-openai-compat-text.sse')));
    const { fetch, requests } = scriptedFetch([{ chunks: [sse] }, { chunks: [sse] }]);
    const plain = createLlmGateway(openAiCompatible, { maxRetries: 0, timeoutMs: 5_000, fetch });
    const reasoning = createLlmGateway(
      { ...openAiCompatible, reasoningEffort: 'minimal' },
      { maxRetries: 0, timeoutMs: 5_000, fetch },
    );
    await plain.streamChat({ messages: [{ role: 'user', content: 'hi' }] });
    await reasoning.streamChat({ messages: [{ role: 'user', content: 'hi' }] });
    expect(requests[0]?.body).not.toHaveProperty('reasoning_effort');
    expect(requests[1]?.body).toMatchObject({ reasoning_effort: 'minimal' });
    expect(requests.map((request) => request.url)).toEqual([
      'http://llm.test/v1/chat/completions',
      'http://llm.test/v1/chat/completions',
    ]);
  });
});
