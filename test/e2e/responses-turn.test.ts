// A chat turn end to end with LLM_API=responses: the local runtime against a scripted model that speaks only
// the Responses API (and refuses Chat Completions), then against the offline model as `npm start` runs it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ChatCompletionRequest as OfflineRequest } from '../../local/offline-model/request-schema.js';
import { planReply } from '../../local/offline-model/reply-rules.js';
import { productVocabulary } from '../../local/offline-model-vocabulary.js';
import type { LocalRuntime } from '../../local/runtime.js';
import { MESSAGE_COMPLETED_TOPIC } from '../../shared/conversation/message-completed.js';
import { HISTORY_SUBSCRIPTION } from '../../shared/history/contracts.js';
import { MEMORY_SUBSCRIPTION } from '../../shared/memory/contracts.js';
import type { ChatEvent } from '../../shared/streaming/contracts.js';
import { ChatClient, expectStatus, oneTo, seqs, type RealtimeListener } from '../support/chat-client.js';
import { settle, startTestRuntime } from '../support/local-runtime.js';
import {
  startScriptedModel,
  type ChatCompletionRequest,
  type ScriptedModel,
} from '../support/scripted-model.js';

const QUESTION = 'I love sailing. Think it through: add 2 and 3, and add 4 and 5, at the same time.';
const FIRST_PARTS = ['**Reading the request**\n\nTwo sums are asked for.', '**Planning**\n\nBoth at once.'];
const SECOND_PARTS = ['**Adding up**\n\nBoth results are in.'];
const ANSWER = '2 + 3 = 5 and 4 + 5 = 9.';
const CALLS = [
  { name: 'add_numbers', arguments: '{"a":2,"b":3}' },
  { name: 'add_numbers', arguments: '{"a":4,"b":5}' },
];

/** The scripted model's token count of a text (each word with its leading whitespace). */
const tokens = (texts: readonly string[]) =>
  texts.reduce((n, text) => n + (text.match(/\s*\S+/g)?.length ?? 0), 0);

function ofType<T extends ChatEvent['type']>(events: readonly ChatEvent[], type: T) {
  return events.filter((event): event is Extract<ChatEvent, { type: T }> => event.type === type);
}

/** The reasoning text of each part a client shows: the reasoning deltas between two reasoning-end events. */
function reasoningParts(events: readonly ChatEvent[]): string[] {
  const parts: string[] = [];
  let open = '';
  for (const event of events) {
    if (event.type === 'reasoning-delta') open += event.delta;
    if (event.type === 'reasoning-end') {
      parts.push(open);
      open = '';
    }
  }
  expect(open).toBe('');
  return parts;
}

/** The event types with runs of deltas collapsed into one, to read the turn's shape. */
function shape(events: readonly ChatEvent[]): string[] {
  return events
    .map((event) => event.type)
    .filter((type, index, all) => !(type.endsWith('delta') || type === 'content') || all[index - 1] !== type);
}

describe('a chat turn on the Responses API, with a scripted model', () => {
  let model: ScriptedModel;
  let runtime: LocalRuntime;
  let client: ChatClient;
  let live: RealtimeListener;

  beforeAll(async () => {
    model = await startScriptedModel(
      (request: ChatCompletionRequest) => {
        // The workers' structured output: the offline model's stand-in rules answer it.
        if (request.stream !== true)
          return { content: planReply(request as unknown as OfflineRequest, productVocabulary).content };
        if (request.messages.at(-1)?.role === 'tool')
          return { reasoningParts: SECOND_PARTS, content: ANSWER, cachedTokens: 3 };
        return { reasoningParts: FIRST_PARTS, toolCalls: CALLS, cachedTokens: 7 };
      },
      { api: 'responses' },
    );
    runtime = await startTestRuntime({ settings: { ...model.settings, LLM_REASONING_EFFORT: 'low' } });
    client = new ChatClient(runtime.url, 'user_001');
    live = await client.listen();
  });
  afterAll(async () => {
    live?.stop();
    await runtime?.stop();
    await model?.close();
  });

  it('streams reasoning parts, parallel tool calls, their results and the answer, with full usage', async () => {
    const sessionId = await client.startSession();
    const chatMessageId = await client.send(sessionId, QUESTION);
    const events = await live.waitForTerminal(chatMessageId);
    const replay = (await client.stream(sessionId, chatMessageId)).map((frame) => frame.data);

    expect(replay).toEqual(events);
    expect(seqs(events)).toEqual(oneTo(events.length));
    expect(shape(events)).toEqual([
      'message-start',
      ...['reasoning-delta', 'reasoning-end', 'reasoning-delta', 'reasoning-end'],
      'tool-call',
      'tool-call',
      'tool-result',
      'tool-result',
      ...['reasoning-delta', 'reasoning-end'],
      'content',
      'message-end',
    ]);
    expect(reasoningParts(events)).toEqual([...FIRST_PARTS, ...SECOND_PARTS]);
    const calls = ofType(events, 'tool-call');
    expect(calls.map((call) => [call.round, call.name, call.arguments])).toEqual(
      CALLS.map((call) => [0, call.name, call.arguments]),
    );
    expect(new Set(calls.map((call) => call.toolCallId)).size).toBe(2);
    expect(ofType(events, 'tool-result').map((result) => [result.toolCallId, result.result])).toEqual([
      [calls[0]!.toolCallId, expect.stringContaining('5') as string],
      [calls[1]!.toolCallId, expect.stringContaining('9') as string],
    ]);
    expect(
      ofType(events, 'content')
        .map((event) => event.delta)
        .join(''),
    ).toBe(ANSWER);

    const reasoningTokens = tokens(FIRST_PARTS) + tokens(SECOND_PARTS);
    const end = events.at(-1);
    expect(end).toMatchObject({
      type: 'message-end',
      finishReason: 'stop',
      usage: { promptTokens: 17 + 13, cachedPromptTokens: 7 + 3, reasoningTokens },
    });

    // What the model was asked, on the wire: both rounds on /v1/responses.
    const [first, second] = model.responsesRequests.filter((request) => request.stream === true);
    expect(first).toMatchObject({
      stream: true,
      store: false,
      reasoning: { effort: 'low', summary: 'auto' },
      tool_choice: 'auto',
      input: [{ role: 'user', content: QUESTION }],
    });
    expect(first?.instructions).toMatch(/\S/);
    expect(first?.tools).toContainEqual(
      expect.objectContaining({ type: 'function', name: 'add_numbers', strict: false }),
    );
    expect(second?.input).toEqual([
      { role: 'user', content: QUESTION },
      ...calls.map((call) => ({
        type: 'function_call',
        call_id: call.toolCallId,
        name: call.name,
        arguments: call.arguments,
      })),
      ...ofType(events, 'tool-result').map((result) => ({
        type: 'function_call_output',
        call_id: result.toolCallId,
        output: expect.any(String) as string,
      })),
    ]);

    // The committed answer is what the client was shown, with the turn's usage.
    const memory = await runtime.app.chat.turn.workingMemory.load('user_001', sessionId);
    const assistant = memory.messages.find(
      (message) => message.chatMessageId === chatMessageId && message.role === 'assistant',
    );
    expect(assistant).toMatchObject({
      content: ANSWER,
      finishReason: 'stop',
      usage: end?.type === 'message-end' ? end.usage : {},
    });
    expect(assistant?.toolCalls).toHaveLength(2);

    // The workers' JSON output went through the Responses API: an indexed exchange, a searchable summary, and the
    // user's own words as a fact.
    await settle(runtime);
    const formats = model.responsesRequests
      .filter((request) => request.stream !== true)
      .map((request) =>
        request.text?.format?.type === 'json_schema' ? request.text.format.name : undefined,
      );
    expect(formats).toEqual(
      expect.arrayContaining(['exchange_index', 'memory_profile_changes', 'conversation_summary']),
    );
    for (const subscriptionName of [HISTORY_SUBSCRIPTION, MEMORY_SUBSCRIPTION])
      expect(
        runtime.serviceBus.deadLetters({ topicName: MESSAGE_COMPLETED_TOPIC, subscriptionName }),
      ).toEqual([]);
    const search = await expectStatus<{ results: { sessionId: string; summary: string }[] }>(
      await fetch(`${runtime.url}/api/memory/users/user_001/conversations/search`, {
        method: 'POST',
        headers: client.headers({ 'content-type': 'application/json' }),
        body: JSON.stringify({ query: 'sailing', limit: 5 }),
      }),
      200,
    );
    expect(search.results).toEqual([
      expect.objectContaining({ sessionId, summary: expect.stringMatching(/^I love sailing\./) as string }),
    ]);
    const { facts } = await expectStatus<{ facts: { statement: string }[] }>(
      await fetch(`${runtime.url}/api/memory/users/user_001/memories`, { headers: client.headers() }),
      200,
    );
    expect(facts.map((fact) => fact.statement)).toContain('The user loves sailing.');
  });
});

describe('a chat turn on the Responses API, with the offline model', () => {
  let runtime: LocalRuntime;
  let client: ChatClient;
  let live: RealtimeListener;

  beforeAll(async () => {
    // What `npm start` runs for a user who sets LLM_API=responses (and asks for reasoning summaries).
    runtime = await startTestRuntime({ settings: { LLM_API: 'responses', LLM_REASONING_EFFORT: 'medium' } });
    client = new ChatClient(runtime.url, 'user_002');
    live = await client.listen();
  });
  afterAll(async () => {
    live?.stop();
    await runtime?.stop();
  });

  it('reasons in summary parts, calls the tool and answers from its result', async () => {
    const sessionId = await client.startSession();
    const chatMessageId = await client.send(sessionId, 'Think first, then use add_numbers to add 2 and 3.');
    const events = await live.waitForTerminal(chatMessageId);

    expect(seqs(events)).toEqual(oneTo(events.length));
    // Two summary parts per round: Chat Completions has no parts, so only the Responses API can show this.
    expect(shape(events)).toEqual([
      'message-start',
      ...['reasoning-delta', 'reasoning-end', 'reasoning-delta', 'reasoning-end'],
      'tool-call',
      'tool-result',
      ...['reasoning-delta', 'reasoning-end', 'reasoning-delta', 'reasoning-end'],
      'content',
      'message-end',
    ]);
    expect(reasoningParts(events)[0]).toMatch(/^\*\*Reading the message\*\*\n\nThe user wrote "Think first/);
    expect(ofType(events, 'tool-result')[0]).toMatchObject({ name: 'add_numbers', isError: false });
    expect(
      ofType(events, 'content')
        .map((event) => event.delta)
        .join(''),
    ).toMatch(/add_numbers returned .*\b5\b/);
    expect(events.at(-1)).toMatchObject({
      type: 'message-end',
      finishReason: 'stop',
      usage: { cachedPromptTokens: 0, reasoningTokens: expect.any(Number) as number },
    });
  });
});
