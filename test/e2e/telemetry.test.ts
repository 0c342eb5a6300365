// One trace per turn, exported over OTLP/HTTP (http/json) to a receiver in the test: the tool turn's span tree from
// the POST to the model calls, the GenAI attributes and the scripted model's usage, the workers' linked traces, the
// metrics, and the rule that no message text is exported unless the content opt-in is on.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalRuntime } from '../../local/runtime.js';
import { ChatClient } from '../support/chat-client.js';
import { settle, startTestRuntime } from '../support/local-runtime.js';
import { startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from '../support/otlp-receiver.js';
import {
  SCRIPTED_MODEL,
  startScriptedModel,
  type ChatCompletionRequest,
  type ScriptedModel,
} from '../support/scripted-model.js';

const QUESTION = 'Please add two and three for my zanzibar-walrus budget';
const ANSWER = 'The total is five, said the periwinkle-oracle';
const SPAN_KIND_SERVER = 2;

/** The usage the scripted model reports for the tool round and for the answer round. */
const TOOL_ROUND_USAGE = {
  prompt_tokens: 321,
  completion_tokens: 17,
  total_tokens: 338,
  completion_tokens_details: { reasoning_tokens: 9 },
  prompt_tokens_details: { cached_tokens: 128 },
};
const ANSWER_ROUND_USAGE = { prompt_tokens: 355, completion_tokens: 23, total_tokens: 378 };

/** What the history and memory workers ask for, answered with nothing of the user's words. */
function structured(request: ChatCompletionRequest) {
  const name = request.response_format?.json_schema?.name;
  if (name === 'exchange_index') return { line: 'An addition.', tags: ['math'] };
  if (name === 'session_summary') return { summary: 'Earlier turns.' };
  if (name === 'memory_profile_changes') return { add: [], reaffirm: [], replace: [], retract: [] };
  if (name === 'conversation_summary')
    return { summary: 'A sum.', themes: ['math'], persons: [], places: [], user_sentiment: 'neutral' };
  throw new Error(`unexpected structured request ${String(name)}`);
}

function script(request: ChatCompletionRequest) {
  if (request.response_format !== undefined) return { content: JSON.stringify(structured(request)) };
  if (!request.messages.some((message) => message.role === 'tool'))
    return {
      toolCalls: [
        { name: 'add_numbers', arguments: '{"a":2,"b":3}' },
        { name: 'search_conversation_history', arguments: '{"search_query":"sums"}' },
      ],
      usage: TOOL_ROUND_USAGE,
    };
  return { content: ANSWER, usage: ANSWER_ROUND_USAGE };
}

interface Turn {
  sessionId: string;
  spans: ReceivedSpan[];
  payloads: string[];
  metrics: ReturnType<OtlpReceiver['metricPoints']>;
}

/** Runs one tool turn on a runtime that exports to a fresh receiver, and returns what was exported. */
async function exportedTurn(model: ScriptedModel, settings: Record<string, string>): Promise<Turn> {
  const receiver = await startOtlpReceiver();
  let runtime: LocalRuntime | undefined;
  try {
    runtime = await startTestRuntime({
      settings: {
        ...model.settings,
        OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint,
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
        ...settings,
      },
    });
    const alice = new ChatClient(runtime.url, 'user_001');
    const sessionId = await alice.startSession();
    const id = await alice.send(sessionId, QUESTION);
    const frames = await alice.stream(sessionId, id);
    expect(frames.at(-1)?.data.type).toBe('message-end');
    // The history and memory workers run after the turn, in traces of their own.
    await settle(runtime);
    await runtime.stop();
    runtime = undefined;
    return {
      sessionId,
      spans: receiver.spans(),
      payloads: receiver.payloads(),
      metrics: receiver.metricPoints(),
    };
  } finally {
    await runtime?.stop();
    await receiver.close();
  }
}

function named(spans: readonly ReceivedSpan[], name: string): ReceivedSpan[] {
  return spans.filter((span) => span.name === name);
}

function only(spans: readonly ReceivedSpan[], name: string): ReceivedSpan {
  const found = named(spans, name);
  expect(found, `spans named ${name}`).toHaveLength(1);
  return found[0] as ReceivedSpan;
}

/** The names of a span's ancestors, nearest first, up to the trace's root. */
function ancestry(spans: readonly ReceivedSpan[], span: ReceivedSpan): string[] {
  const byId = new Map(spans.map((one) => [one.spanId, one]));
  const names: string[] = [];
  for (let parent = byId.get(span.parentSpanId ?? ''); parent; parent = byId.get(parent.parentSpanId ?? ''))
    names.push(parent.name);
  return names;
}

describe('telemetry of a tool turn, exported over OTLP', () => {
  let model: ScriptedModel;
  let turn: Turn;

  beforeAll(async () => {
    model = await startScriptedModel(script);
    turn = await exportedTurn(model, {});
  }, 60_000);
  afterAll(async () => {
    await model?.close();
  });

  it('puts the whole turn in one trace, from the POST through the queue and the activities to the tool', () => {
    const { spans } = turn;
    const post = only(spans, 'POST /api/chat');
    expect(post.kind).toBe(SPAN_KIND_SERVER);
    expect(post.parentSpanId).toBeUndefined();
    const inTurn = spans.filter((span) => span.traceId === post.traceId);

    expect(ancestry(inTurn, only(inTurn, 'process user-messages'))).toEqual([
      'send user-messages',
      'POST /api/chat',
    ]);
    const tool = only(inTurn, 'execute_tool add_numbers');
    expect(ancestry(inTurn, tool)).toEqual([
      'activity runTool',
      'process user-messages',
      'send user-messages',
      'POST /api/chat',
    ]);
    expect(tool.attributes).toMatchObject({
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': 'add_numbers',
      'gen_ai.tool.type': 'function',
    });
    expect(tool.attributes['gen_ai.tool.call.id']).toEqual(expect.any(String));
    // The memory tool's search is a retrieval, its query embedded by the embeddings model.
    const retrieval = only(inTurn, 'retrieval conversation-summaries');
    expect(ancestry(inTurn, retrieval)[0]).toBe('execute_tool search_conversation_history');
    expect(retrieval.attributes).toMatchObject({
      'gen_ai.operation.name': 'retrieval',
      'gen_ai.data_source.id': 'conversation-summaries',
    });
    const embedding = inTurn.find((span) => span.name.startsWith('embeddings '));
    expect(embedding && ancestry(inTurn, embedding)[0]).toBe('retrieval conversation-summaries');

    // Every event batch is stored, then sent over Web PubSub, inside the activity that streamed it (while the model
    // streams, inside its model call).
    for (const name of ['turn_events.append', 'webpubsub send']) {
      const found = named(inTurn, name);
      expect(found.length, name).toBeGreaterThan(0);
      for (const span of found)
        expect(ancestry(inTurn, span).find((parent) => parent.startsWith('activity '))).toMatch(
          /^activity (llmStep|runTool)$/,
        );
    }
  });

  it("makes each model call a `chat {model}` span with the GenAI attributes and the model's reported usage", () => {
    const post = only(turn.spans, 'POST /api/chat');
    const calls = named(turn.spans, `chat ${SCRIPTED_MODEL}`).filter((span) => span.traceId === post.traceId);
    expect(calls).toHaveLength(2);
    for (const call of calls) {
      expect(ancestry(turn.spans, call).slice(0, 2)).toEqual(['activity llmStep', 'process user-messages']);
      expect(call.attributes).toMatchObject({
        'gen_ai.operation.name': 'chat',
        'gen_ai.provider.name': 'openai',
        'gen_ai.request.model': SCRIPTED_MODEL,
        'gen_ai.response.model': SCRIPTED_MODEL,
        'gen_ai.request.stream': true,
        'gen_ai.conversation.id': turn.sessionId,
      });
    }
    const [toolRound, answerRound] = [...calls].sort(
      (a, b) =>
        Number(a.attributes['gen_ai.usage.input_tokens']) - Number(b.attributes['gen_ai.usage.input_tokens']),
    );
    expect(toolRound?.attributes).toMatchObject({
      'gen_ai.usage.input_tokens': TOOL_ROUND_USAGE.prompt_tokens,
      'gen_ai.usage.output_tokens': TOOL_ROUND_USAGE.completion_tokens,
      'gen_ai.usage.reasoning.output_tokens': 9,
      'gen_ai.usage.cache_read.input_tokens': 128,
      'gen_ai.response.finish_reasons': ['tool_calls'],
    });
    expect(answerRound?.attributes).toMatchObject({
      'gen_ai.usage.input_tokens': ANSWER_ROUND_USAGE.prompt_tokens,
      'gen_ai.usage.output_tokens': ANSWER_ROUND_USAGE.completion_tokens,
      'gen_ai.response.finish_reasons': ['stop'],
    });
  });

  it("runs the history and memory workers in traces of their own, linked to the turn's", () => {
    const post = only(turn.spans, 'POST /api/chat');
    const turnSpanIds = new Set(turn.spans.filter((s) => s.traceId === post.traceId).map((s) => s.spanId));
    const workers = named(turn.spans, 'process message-completed');
    expect(workers.map((span) => span.attributes['messaging.destination.subscription.name']).sort()).toEqual([
      'history',
      'memory',
    ]);
    for (const worker of workers) {
      expect(worker.traceId).not.toBe(post.traceId);
      expect(worker.links).toHaveLength(1);
      expect(worker.links[0]?.traceId).toBe(post.traceId);
      expect(turnSpanIds.has(worker.links[0]?.spanId ?? '')).toBe(true);
    }
    // Their model calls and the memory worker's writes are in their traces.
    const memoryWorker = workers.find(
      (span) => span.attributes['messaging.destination.subscription.name'] === 'memory',
    );
    const memoryTrace = turn.spans.filter((span) => span.traceId === memoryWorker?.traceId);
    expect(memoryTrace.some((span) => span.name === 'memory.write')).toBe(true);
    expect(memoryTrace.some((span) => span.name === `chat ${SCRIPTED_MODEL}`)).toBe(true);
  });

  it('exports the GenAI client metrics and the turn metrics', () => {
    const names = new Set(turn.metrics.map((point) => point.name));
    for (const name of [
      'gen_ai.client.operation.duration',
      'gen_ai.client.token.usage',
      'gen_ai.client.operation.time_to_first_chunk',
      'chat.turn.duration',
      'chat.turn.first_token.added',
      'chat.queue.wait',
      'chat.turns',
    ])
      expect(names, name).toContain(name);
    expect(turn.metrics.find((point) => point.name === 'chat.turns')).toMatchObject({
      attributes: { 'chat.turn.outcome': 'completed' },
      value: 1,
    });
    const inputTokens = turn.metrics.filter(
      (point) =>
        point.name === 'gen_ai.client.token.usage' &&
        point.attributes['gen_ai.token.type'] === 'input' &&
        point.attributes['gen_ai.operation.name'] === 'chat',
    );
    expect(inputTokens.length).toBeGreaterThan(0);
  });

  it("exports none of the user's words and none of the answer by default", () => {
    expect(turn.payloads.length).toBeGreaterThan(0);
    const everything = turn.payloads.join('\n');
    expect(everything).not.toContain('zanzibar-walrus');
    expect(everything).not.toContain('periwinkle-oracle');
    expect(everything).not.toContain('gen_ai.input.messages');
    expect(everything).not.toContain('gen_ai.tool.call.arguments');
  });
});

describe('telemetry with the GenAI content opt-in', () => {
  let model: ScriptedModel;
  afterAll(async () => {
    await model?.close();
  });

  it('puts the prompt and the answer on the model spans', async () => {
    model = await startScriptedModel(script);
    const turn = await exportedTurn(model, { OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: 'true' });
    const answering = named(turn.spans, `chat ${SCRIPTED_MODEL}`).find(
      (span) => span.attributes['gen_ai.response.finish_reasons']?.toString() === 'stop',
    );
    expect(String(answering?.attributes['gen_ai.input.messages'])).toContain('zanzibar-walrus');
    expect(String(answering?.attributes['gen_ai.output.messages'])).toContain('periwinkle-oracle');
    expect(only(turn.spans, 'execute_tool add_numbers').attributes).toMatchObject({
      'gen_ai.tool.call.arguments': '{"a":2,"b":3}',
      'gen_ai.tool.call.result': '{"sum":5}',
    });
  }, 60_000);
});
