import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { installInMemoryTelemetry, type InMemoryTelemetry } from '../../test/support/in-memory-telemetry.js';
import { withConversation, withTurnStart } from '../telemetry/spans.js';
import { LlmError, type LlmConnection, type LlmGateway, type LlmReply } from './llm-gateway.js';
import { traceLlmGateway } from './traced-llm-gateway.js';

const connection: LlmConnection = {
  kind: 'azure-openai',
  endpoint: 'https://example.openai.azure.com',
  chatDeployment: 'gpt-chat',
  embeddingDeployment: 'text-embed',
};

const reply: LlmReply = {
  content: 'the secret answer',
  reasoning: '',
  toolCalls: [],
  finishReason: 'stop',
  model: 'gpt-chat-2025',
  usage: {
    promptTokens: 40,
    completionTokens: 12,
    totalTokens: 52,
    reasoningTokens: 5,
    cachedPromptTokens: 32,
  },
};

/** A gateway that streams two deltas and replies as told, or fails. */
function fakeGateway(failure?: Error): LlmGateway {
  return {
    streamChat: (_request, onDelta) => {
      if (failure) return Promise.reject(failure);
      onDelta?.({ type: 'content', text: 'the secret ' });
      onDelta?.({ type: 'content', text: 'answer' });
      return Promise.resolve(reply);
    },
    completeJson: <T>() => Promise.resolve({ ok: true } as T),
    embed: (texts) => Promise.resolve(texts.map(() => [0.1, 0.2, 0.3])),
    probe: () => Promise.resolve({ ok: true, detail: 'fine' }),
  };
}

const messages = [
  { role: 'system' as const, content: 'be brief' },
  { role: 'user' as const, content: 'the secret question' },
];

describe('the traced model gateway', () => {
  let telemetry: InMemoryTelemetry;
  beforeEach(() => {
    telemetry = installInMemoryTelemetry();
  });
  afterEach(() => telemetry.uninstall());

  it('makes a streamed call a `chat {model}` client span with the GenAI attributes and usage, and no text', async () => {
    const llm = traceLlmGateway(fakeGateway(), connection, { captureContent: false });
    const deltas: string[] = [];
    await withConversation('session-7', () =>
      llm.streamChat({ messages, maxTokens: 500 }, (delta) => {
        if (delta.type === 'content') deltas.push(delta.text);
      }),
    );
    expect(deltas).toEqual(['the secret ', 'answer']);
    const [span] = telemetry.spans.getFinishedSpans();
    expect(span?.name).toBe('chat gpt-chat');
    expect(span?.attributes).toMatchObject({
      'gen_ai.operation.name': 'chat',
      'gen_ai.provider.name': 'azure.ai.openai',
      'gen_ai.request.model': 'gpt-chat',
      'gen_ai.response.model': 'gpt-chat-2025',
      'gen_ai.request.stream': true,
      'gen_ai.request.max_tokens': 500,
      'gen_ai.conversation.id': 'session-7',
      'gen_ai.usage.input_tokens': 40,
      'gen_ai.usage.output_tokens': 12,
      'gen_ai.usage.reasoning.output_tokens': 5,
      'gen_ai.usage.cache_read.input_tokens': 32,
      'gen_ai.response.finish_reasons': ['stop'],
    });
    expect(JSON.stringify(span?.attributes)).not.toContain('secret');
  });

  it('puts the prompt and the answer on the span when content capture is on', async () => {
    const llm = traceLlmGateway(fakeGateway(), connection, { captureContent: true });
    await llm.streamChat({ messages });
    const [span] = telemetry.spans.getFinishedSpans();
    expect(JSON.parse(String(span?.attributes['gen_ai.system_instructions']))).toEqual([
      { type: 'text', content: 'be brief' },
    ]);
    expect(JSON.parse(String(span?.attributes['gen_ai.input.messages']))).toEqual([
      { role: 'user', parts: [{ type: 'text', content: 'the secret question' }] },
    ]);
    expect(JSON.parse(String(span?.attributes['gen_ai.output.messages']))).toEqual([
      { role: 'assistant', parts: [{ type: 'text', content: 'the secret answer' }], finish_reason: 'stop' },
    ]);
  });

  it('records the GenAI client metrics, and the time added before the first model call of a turn once', async () => {
    const llm = traceLlmGateway(fakeGateway(), connection, { captureContent: false });
    await withTurnStart(Date.now() - 2_000, async () => {
      await llm.streamChat({ messages });
      await llm.streamChat({ messages });
    });
    await llm.embed(['a query']);
    const points = await telemetry.metricPoints();
    const names = points.map((point) => point.name);
    expect(names).toContain('gen_ai.client.operation.duration');
    expect(names).toContain('gen_ai.client.operation.time_to_first_chunk');
    const tokens = points.filter((point) => point.name === 'gen_ai.client.token.usage');
    expect(
      tokens.map((point) => [point.attributes['gen_ai.token.type'], (point.value as { sum: number }).sum]),
    ).toEqual([
      ['input', 80],
      ['output', 24],
    ]);
    const added = points.filter((point) => point.name === 'chat.turn.first_token.added');
    expect(added).toHaveLength(1);
    expect((added[0]?.value as { count: number; sum: number }).count).toBe(1);
    expect((added[0]?.value as { sum: number }).sum).toBeGreaterThanOrEqual(1.9);
    expect(telemetry.spans.getFinishedSpans().map((span) => span.name)).toEqual([
      'chat gpt-chat',
      'chat gpt-chat',
      'embeddings text-embed',
    ]);
  });

  it('marks a failed call with its error type, in the span and the duration metric', async () => {
    const failure = new LlmError('rate limited', { providerStatus: 429, retryable: true });
    const llm = traceLlmGateway(fakeGateway(failure), connection, { captureContent: false });
    await expect(llm.streamChat({ messages })).rejects.toBe(failure);
    const [span] = telemetry.spans.getFinishedSpans();
    expect(span?.attributes['error.type']).toBe(failure.code);
    const duration = (await telemetry.metricPoints()).find(
      (point) => point.name === 'gen_ai.client.operation.duration',
    );
    expect(duration?.attributes['error.type']).toBe(failure.code);
  });
});
