// A conversation longer than the prompt's budget, end to end over the local runtime with a scripted model:
// later turns still answer about the beginning, through the rolling summary and the past-answer tools.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalRuntime } from '../../local/runtime.js';
import { HOT_CONVERSATIONS_CONTAINER } from '../../shared/chat/contracts/documents.js';
import { ChatClient, type RealtimeListener } from '../support/chat-client.js';
import { settle, startTestRuntime } from '../support/local-runtime.js';
import {
  startScriptedModel,
  type ChatCompletionRequest,
  type ScriptedModel,
  type ScriptedReply,
} from '../support/scripted-model.js';

const BOAT = 'My boat is called Aurora and she is moored in Porto.';
const BOAT_ANSWER = 'Noted: your boat Aurora is moored in Porto, berth 12.';
const FILLER = (i: number) =>
  `Tell me tide fact number ${i}, with a few sentences of detail about harbours and currents.`;
const FILLER_ANSWER = (i: number) =>
  `Tide fact ${i}: ${'the sea rises and falls twice a day as the moon pulls on the water, '.repeat(3)}done.`;

const contents = (request: ChatCompletionRequest) => request.messages.map((m) => m.content ?? '').join('\n');

/** What a careful model would answer to the history worker's structured-output requests. */
function structured(request: ChatCompletionRequest): object {
  const input = JSON.parse(request.messages.at(-1)?.content ?? '{}') as {
    question?: string;
    answer?: string;
    firstQuestion?: string;
    previousSummary?: string;
    exchanges?: { question: string; answer: string }[];
  };
  const name = request.response_format?.json_schema?.name;
  if (name === 'exchange_index') {
    const boat = /boat/i.test(input.question ?? '');
    return {
      line: `Q: ${(input.question ?? '').slice(0, 60)} A: ${(input.answer ?? '').slice(0, 60)}`,
      tags: boat ? ['boat', 'mooring'] : ['tides'],
      ...(input.firstQuestion !== undefined ? { title: 'Boat and tides' } : {}),
    };
  }
  if (name === 'session_summary') {
    const facts = (input.exchanges ?? [])
      .filter((exchange) => /boat/i.test(exchange.question))
      .map(() => "The user's boat is called Aurora, moored in Porto at berth 12.");
    const tides = (input.exchanges ?? []).length;
    return {
      summary: [input.previousSummary ?? '', ...facts, `${tides} more tide facts were given.`]
        .join(' ')
        .trim(),
    };
  }
  throw new Error(`unexpected structured request ${String(name)}`);
}

describe('a conversation beyond the prompt budget', () => {
  let model: ScriptedModel;
  let runtime: LocalRuntime;
  let client: ChatClient;
  let live: RealtimeListener;
  let boatExchangeId = '';

  beforeAll(async () => {
    model = await startScriptedModel((request: ChatCompletionRequest): ScriptedReply => {
      if (request.stream !== true) return { content: JSON.stringify(structured(request)) };
      const last = request.messages.at(-1);
      const text = contents(request);
      if (last?.role === 'tool') return { content: `From our earlier exchange: ${last.content ?? ''}` };
      const question = last?.content ?? '';
      if (question === BOAT) return { content: BOAT_ANSWER };
      if (question.startsWith('Tell me tide fact')) {
        const i = Number(/number (\d+)/.exec(question)?.[1]);
        return { content: FILLER_ANSWER(i) };
      }
      if (question === 'What is my boat called?')
        return { content: /Aurora/.test(text) ? 'Your boat is called Aurora.' : 'I do not know.' };
      if (question === 'What exactly did you say about my berth?') {
        const id = /- ([0-9a-f-]{36}): Q: My boat/.exec(text)?.[1];
        return id
          ? { toolCalls: [{ name: 'retrieve_past_answer', arguments: JSON.stringify({ exchangeId: id }) }] }
          : { content: 'I cannot find it.' };
      }
      if (question === 'Did we talk about mooring?')
        return {
          toolCalls: [{ name: 'lookup_past_conversation', arguments: JSON.stringify({ topic: 'mooring' }) }],
        };
      return { content: 'OK.' };
    });
    runtime = await startTestRuntime({ settings: { ...model.settings, CHAT_PROMPT_TOKEN_BUDGET: '400' } });
    client = new ChatClient(runtime.url, 'user_001');
    live = await client.listen();
  });
  afterAll(async () => {
    live?.stop();
    await runtime?.stop();
    await model?.close();
  });

  async function ask(
    sessionId: string,
    text: string,
  ): Promise<{ id: string; answer: string; request: ChatCompletionRequest }> {
    const from = model.requests.length;
    const id = await client.send(sessionId, text);
    const events = await live.waitForTerminal(id);
    expect(events.at(-1)?.type).toBe('message-end');
    await settle(runtime);
    const memory = await runtime.app.chat.turn.workingMemory.load('user_001', sessionId);
    const answer =
      memory.messages.find((m) => m.chatMessageId === id && m.role === 'assistant')?.content ?? '';
    const request = model.requests.slice(from).find((r) => r.stream === true && contents(r).includes(text));
    return { id, answer, request: request! };
  }

  it('keeps answering about its beginning once the beginning left the prompt', async () => {
    const sessionId = await client.startSession();
    boatExchangeId = (await ask(sessionId, BOAT)).id;
    for (let i = 1; i <= 6; i += 1) await ask(sessionId, FILLER(i));

    const { answer, request } = await ask(sessionId, 'What is my boat called?');
    // The first turn is no longer in the prompt's history, but the summary the model wrote carries it.
    expect(request.messages.some((m) => m.role === 'user' && m.content === BOAT)).toBe(false);
    const memory = request.messages
      .filter((m) => m.role === 'system')
      .map((m) => m.content ?? '')
      .join('\n');
    expect(memory).toMatch(/Summary of the earlier part of this conversation: .*Aurora/s);
    expect(memory).toContain(`- ${boatExchangeId}: Q: My boat is called Aurora`);
    expect(answer).toBe('Your boat is called Aurora.');

    const exact = await ask(sessionId, 'What exactly did you say about my berth?');
    expect(exact.answer).toContain(BOAT_ANSWER);

    const lookup = await ask(sessionId, 'Did we talk about mooring?');
    expect(lookup.answer).toContain(boatExchangeId);

    // The model titled the conversation once it had enough to go on.
    const conversation = (await (
      await fetch(`${runtime.url}/api/history/conversations/${sessionId}?limit=1`, {
        headers: client.headers(),
      })
    ).json()) as { title: string; titleSource: string };
    expect(conversation).toMatchObject({ title: 'Boat and tides', titleSource: 'model' });
  });

  it('resumes from long-term history when the hot copy expired, and the model sees the earlier turns', async () => {
    const sessionId = await client.startSession();
    await ask(sessionId, BOAT);
    const hot = runtime.clients.database.container(HOT_CONVERSATIONS_CONTAINER);
    const { resources } = await hot.items
      .query<{ id: string }>('SELECT c.id FROM c', { partitionKey: sessionId })
      .fetchAll();
    expect(resources.length).toBeGreaterThan(0);
    for (const item of resources) await hot.item(item.id, sessionId).delete();

    const { request, answer } = await ask(sessionId, 'What is my boat called?');
    expect(request.messages.map((m) => [m.role, m.content])).toEqual(
      expect.arrayContaining([
        ['user', BOAT],
        ['assistant', BOAT_ANSWER],
      ]),
    );
    expect(answer).toBe('Your boat is called Aurora.');
  });
});
