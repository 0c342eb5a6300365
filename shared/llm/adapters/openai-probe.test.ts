// The health probe through the real openai client on a scripted server: the models list, the route turns use
// (refused without generating anything), and no throw or retry when the endpoint is down.
import { describe, expect, it } from 'vitest';
import { scriptedFetch } from '../../../test/support/llm-wire-replay.js';
import { openAiCompatible } from '../../../test/support/llm-connections.js';
import { createLlmGateway } from './openai-gateway.js';

const encoder = new TextEncoder();

describe('probe', () => {
  const modelList = {
    chunks: [encoder.encode('{"object":"list","data":[{"id":"chat-model","object":"model"}]}')],
  };
  const refusedBody = {
    status: 400,
    chunks: [
      encoder.encode('{"error":{"message":"missing required parameter","type":"invalid_request_error"}}'),
    ],
  };
  it('reports a reachable endpoint and whether the chat model is listed', async () => {
    const { fetch, requests } = scriptedFetch([
      { chunks: [encoder.encode('{"object":"list","data":[{"id":"chat-model","object":"model"}]}')] },
      refusedBody,
    ]);
    const gateway = createLlmGateway(openAiCompatible, { maxRetries: 3, timeoutMs: 5_000, fetch });
    expect(await gateway.probe()).toEqual({
      ok: true,
      detail: 'LLM endpoint http://llm.test/v1 is reachable; chat model "chat-model" is listed.',
    });
    expect(requests[0]?.url).toBe('http://llm.test/v1/models');
  });

  it('calls the route turns use with a body every server refuses, so nothing is generated', async () => {
    const { fetch, requests } = scriptedFetch([modelList, refusedBody, modelList, refusedBody]);
    const completions = createLlmGateway(openAiCompatible, { maxRetries: 0, timeoutMs: 5_000, fetch });
    const responses = createLlmGateway(
      { ...openAiCompatible, api: 'responses' },
      { maxRetries: 0, timeoutMs: 5_000, fetch },
    );
    expect((await completions.probe()).ok).toBe(true);
    expect((await responses.probe()).ok).toBe(true);
    expect(requests.map((request) => request.url)).toEqual([
      'http://llm.test/v1/models',
      'http://llm.test/v1/chat/completions',
      'http://llm.test/v1/models',
      'http://llm.test/v1/responses',
    ]);
    expect(requests[1]?.body).toEqual({ model: 'chat-model' });
    expect(requests[3]?.body).toEqual({});
  });

  it('is down when the server lists its models but has no route for the API in use', async () => {
    const notFound = { status: 404, chunks: [encoder.encode('404 page not found')] };
    const { fetch } = scriptedFetch([modelList, notFound]);
    const gateway = createLlmGateway(
      { ...openAiCompatible, api: 'responses' },
      { maxRetries: 0, timeoutMs: 5_000, fetch },
    );
    const probe = await gateway.probe();
    expect(probe.ok).toBe(false);
    expect(probe.detail).toMatch(/no \/responses route \(POST answered 404\), which LLM_API=responses calls/);
  });

  it('never throws, and does not retry', async () => {
    const { fetch, requests } = scriptedFetch([
      { status: 500, chunks: [encoder.encode('{"error":{"message":"down"}}')] },
      { status: 500, chunks: [encoder.encode('{"error":{"message":"down"}}')] },
    ]);
    const gateway = createLlmGateway(openAiCompatible, { maxRetries: 3, timeoutMs: 5_000, fetch });
    expect(await gateway.probe()).toEqual({
      ok: false,
      detail: 'LLM endpoint http://llm.test/v1 answered HTTP 500: down',
    });
    expect(requests).toHaveLength(1);
  });
});
