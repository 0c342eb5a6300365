// The chat turn end to end, driven as a client drives it: sessions and messages over HTTP, the turn's events
// over Web PubSub and SSE, against the running local runtime with the offline model, and with a scripted
// OpenAI-compatible model where a test must decide what the model answers and see what it was asked.
import { randomUUID } from 'node:crypto';
import type { InvocationContext } from '@azure/functions';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FunctionDefinition } from '../../functions/definition.js';
import { functionDefinitions } from '../../functions/table.js';
import type { LocalRuntime } from '../../local/runtime.js';
import { turnInstanceId } from '../../shared/conversation/turn-ids.js';
import { USER_MESSAGES_QUEUE, type QueuedChatMessage } from '../../shared/chat/contracts/queue.js';
import type { ChatEvent } from '../../shared/streaming/contracts.js';
import { answerText } from '../../shared/streaming/turn-transcript.js';
import {
  ChatClient,
  assembleText,
  oneTo,
  seqs,
  type RealtimeListener,
  type SseFrame,
} from '../support/chat-client.js';
import { startTestRuntime } from '../support/local-runtime.js';
import {
  startScriptedModel,
  type ChatCompletionRequest,
  type ScriptedModel,
} from '../support/scripted-model.js';

/** The committed messages of one turn, oldest first. */
async function committed(runtime: LocalRuntime, userId: string, sessionId: string, chatMessageId?: string) {
  const memory = await runtime.app.chat.turn.workingMemory.load(userId, sessionId);
  return memory.messages.filter(
    (message) => chatMessageId === undefined || message.chatMessageId === chatMessageId,
  );
}

function types(events: readonly ChatEvent[]): string[] {
  return events.map((event) => event.type);
}

function ofType<T extends ChatEvent['type']>(events: readonly ChatEvent[], type: T) {
  return events.filter((event): event is Extract<ChatEvent, { type: T }> => event.type === type);
}

/** The SSE frames' events, after checking each frame's id and event name agree with its data. */
function sseEvents(frames: readonly SseFrame[]): ChatEvent[] {
  for (const frame of frames) {
    expect(frame.id).toBe(String(frame.data.seq));
    expect(frame.event).toBe(frame.data.type);
  }
  return frames.map((frame) => frame.data);
}

/** Sends a marker to the user's connections and waits for it: every earlier send has arrived by then. */
async function drainRealtime(runtime: LocalRuntime, userId: string, listener: RealtimeListener) {
  const marker = randomUUID();
  await runtime.clients.webPubSub.sendToUser(userId, { marker });
  await listener.waitForMessage((data) => (data as { marker?: string }).marker === marker);
}

/**
 * The turn's chatTurn instance: with CHAT_FIRST_ROUND=worker a turn answered without tools never starts one (the
 * worker's own round 0 answered it); with `orchestration` every turn has one.
 */
async function expectTurnInstance(
  runtime: LocalRuntime,
  sessionId: string,
  id: string,
  status: 'Completed',
  tools = false,
) {
  const instance = await runtime.durable.getStatus(turnInstanceId(sessionId, id));
  if (runtime.app.config.chat.firstRound === 'worker' && !tools) expect(instance).toBeUndefined();
  else expect(instance?.runtimeStatus).toBe(status);
  return instance;
}

describe('chat turn with the offline model', () => {
  let runtime: LocalRuntime;
  let alice: ChatClient;
  let aliceLive: RealtimeListener;

  beforeAll(async () => {
    // Small content flushes give a turn many events, so seq gaps and resumption points have room to show.
    runtime = await startTestRuntime({ settings: { STREAM_FLUSH_MAX_CHARS: '16' } });
    alice = new ChatClient(runtime.url, 'user_001');
    // Connected before anything is posted, as the web client does.
    aliceLive = await alice.listen();
  });
  afterAll(async () => {
    aliceLive?.stop();
    await runtime?.stop();
  });

  it('streams a plain answer to WebSocket and SSE alike, and commits both messages', async () => {
    const sessionId = await alice.startSession();
    const id = await alice.send(sessionId, 'reply with 40 words');
    const [frames, live] = await Promise.all([alice.stream(sessionId, id), aliceLive.waitForTerminal(id)]);
    const streamed = sseEvents(frames);

    expect(seqs(streamed)).toEqual(oneTo(streamed.length));
    expect(seqs(live)).toEqual(oneTo(live.length));
    expect(types(live)[0]).toBe('message-start');
    expect(types(live).at(-1)).toBe('message-end');
    expect(new Set(types(live).slice(1, -1))).toEqual(new Set(['content']));
    expect(live[0]).toMatchObject({
      sessionId,
      chatMessageId: id,
      userMessageId: `${id}_user`,
      assistantMessageId: `${id}_assistant`,
    });
    expect(live.at(-1)).toMatchObject({ finishReason: 'stop' });
    for (const event of live) expect(event).toMatchObject({ sessionId, chatMessageId: id });
    expect(streamed).toEqual(live);

    const text = assembleText(live);
    expect(text.trim().split(/\s+/)).toHaveLength(40);
    expect(assembleText(streamed)).toBe(text);
    expect(await committed(runtime, 'user_001', sessionId)).toEqual([
      expect.objectContaining({ messageId: `${id}_user`, role: 'user', content: 'reply with 40 words' }),
      expect.objectContaining({ messageId: `${id}_assistant`, role: 'assistant', content: text }),
    ]);
    await expectTurnInstance(runtime, sessionId, id, 'Completed');
  });

  it('runs a tool the model calls and streams the call, its result and the answer', async () => {
    const sessionId = await alice.startSession();
    const id = await alice.send(sessionId, 'use the add_numbers tool to add 2 and 3');
    const events = await aliceLive.waitForTerminal(id);

    expect(seqs(events)).toEqual(oneTo(events.length));
    const order = types(events).filter(
      (type, index, all) => type !== 'content' || all[index - 1] !== 'content',
    );
    expect(order).toEqual(['message-start', 'tool-call', 'tool-result', 'content', 'message-end']);
    const [call] = ofType(events, 'tool-call');
    const [result] = ofType(events, 'tool-result');
    expect(call?.name).toBe('add_numbers');
    expect(JSON.parse(call?.arguments ?? 'null')).toEqual({ a: 2, b: 3 });
    expect(result).toMatchObject({ toolCallId: call?.toolCallId, name: 'add_numbers', isError: false });
    expect(result?.result).toMatch(/\b5\b/);
    const text = assembleText(events);
    expect(text).toMatch(/add_numbers returned .*\b5\b/);

    const [, assistant] = await committed(runtime, 'user_001', sessionId, id);
    expect(assistant).toMatchObject({ role: 'assistant', content: text, finishReason: 'stop' });
    expect(assistant?.toolCalls).toEqual([
      expect.objectContaining({
        id: call?.toolCallId,
        name: 'add_numbers',
        arguments: call?.arguments,
        result: result?.result,
        isError: false,
      }),
    ]);
  });

  it('streams the reasoning, ends it, and only then the answer', async () => {
    const sessionId = await alice.startSession();
    const id = await alice.send(sessionId, 'think before you answer: why is the sky blue?');
    const events = await aliceLive.waitForTerminal(id);
    const kinds = types(events);

    const deltas = kinds.flatMap((type, index) => (type === 'reasoning-delta' ? [index] : []));
    const end = kinds.indexOf('reasoning-end');
    const firstContent = kinds.indexOf('content');
    expect(deltas.length).toBeGreaterThan(0);
    expect(kinds.filter((type) => type === 'reasoning-end')).toHaveLength(1);
    expect(Math.max(...deltas)).toBeLessThan(end);
    expect(end).toBeLessThan(firstContent);
    expect(
      ofType(events, 'reasoning-delta')
        .map((event) => event.delta)
        .join(''),
    ).toMatch(/\S/);
    const [, assistant] = await committed(runtime, 'user_001', sessionId, id);
    expect(assistant?.content).toBe(assembleText(events));
  });

  it('answers a message once however often it is posted or delivered', async () => {
    const sessionId = await alice.startSession();
    const id = randomUUID();
    const text = 'reply with 12 words';
    await alice.send(sessionId, text, id);
    await alice.send(sessionId, text, id);
    await aliceLive.waitForTerminal(id);
    await runtime.serviceBus.idle();

    // The same message again, under a new Service Bus message id, so duplicate detection lets it through.
    const again: QueuedChatMessage = {
      userId: 'user_001',
      sessionId,
      chatMessageId: id,
      text,
      postedAt: new Date().toISOString(),
    };
    await runtime.serviceBus.publish(USER_MESSAGES_QUEUE, {
      messageId: randomUUID(),
      sessionId,
      body: again,
    });
    await runtime.serviceBus.idle();
    await drainRealtime(runtime, 'user_001', aliceLive);

    // A Web PubSub client receives every send: one turn ran.
    expect(types(aliceLive.arrived(id)).filter((type) => type === 'message-start')).toHaveLength(1);
    expect(types(aliceLive.arrived(id)).filter((type) => type === 'message-end')).toHaveLength(1);
    const streamed = sseEvents(await alice.stream(sessionId, id));
    expect(seqs(streamed)).toEqual(oneTo(streamed.length));
    expect(types(streamed).filter((type) => type === 'message-start' || type === 'message-end')).toEqual([
      'message-start',
      'message-end',
    ]);
    expect((await committed(runtime, 'user_001', sessionId)).map((message) => message.messageId)).toEqual([
      `${id}_user`,
      `${id}_assistant`,
    ]);
    expect(runtime.serviceBus.deadLetters({ queueName: USER_MESSAGES_QUEUE })).toEqual([]);
    await expectTurnInstance(runtime, sessionId, id, 'Completed');
  });

  it('replays a finished turn to a late SSE client, in full or after Last-Event-ID', async () => {
    const sessionId = await alice.startSession();
    const id = await alice.send(sessionId, 'reply with 30 words');
    const live = await aliceLive.waitForTerminal(id);
    const n = live.length;
    const [, assistant] = await committed(runtime, 'user_001', sessionId, id);

    const full = sseEvents(await alice.stream(sessionId, id));
    expect(full).toEqual(live);

    const k = Math.floor(n / 2);
    const rest = sseEvents(await alice.stream(sessionId, id, { lastEventId: String(k) }));
    expect(seqs(rest)).toEqual(oneTo(n).slice(k));
    expect(assembleText(full.slice(0, k)) + assembleText(rest)).toBe(assistant?.content);

    // A client that has the whole turn is told there is nothing more (204 also stops an EventSource reconnecting).
    const ended = await alice.openStream(sessionId, id, { 'last-event-id': String(n) });
    expect(ended.status).toBe(204);
    const pastTheEnd = await alice.openStream(sessionId, id, { 'last-event-id': String(n + 3) });
    expect(pastTheEnd.status).toBe(400);
    expect(await pastTheEnd.json()).toMatchObject({
      code: 'validation_failed',
      detail: expect.stringContaining('past the end'),
    });
  });

  it("keeps a user's sessions, streams and realtime events away from other users", async () => {
    const bob = new ChatClient(runtime.url, 'user_002');
    const bobLive = await bob.listen();
    try {
      const sessionId = await alice.startSession();
      const id = await alice.send(sessionId, 'reply with 20 words');

      const intruding = await bob.post({ sessionId, chatMessageId: randomUUID(), text: 'hello' });
      expect(intruding.status).toBe(404);
      expect(intruding.headers.get('content-type')).toBe('application/problem+json');
      expect(await intruding.json()).toMatchObject({ status: 404, code: 'not_found' });
      const peeking = await bob.openStream(sessionId, id);
      expect(peeking.status).toBe(404);
      expect(await peeking.json()).toMatchObject({ code: 'not_found' });

      const negotiate = await fetch(`${runtime.url}/api/realtime/negotiate?userId=user_001`, {
        headers: bob.headers(),
      });
      expect(negotiate.status).toBe(403);
      expect(await negotiate.json()).toMatchObject({ status: 403, code: 'forbidden' });

      const bobSession = await bob.startSession();
      const impersonating = await bob.post({
        sessionId: bobSession,
        chatMessageId: randomUUID(),
        text: 'hello',
        userId: 'user_001',
      });
      expect(impersonating.status).toBe(403);
      expect(await impersonating.json()).toMatchObject({ code: 'forbidden' });

      await aliceLive.waitForTerminal(id);
      await drainRealtime(runtime, 'user_002', bobLive);
      expect(bobLive.arrivals).toEqual([]);
    } finally {
      bobLive.stop();
    }
  });
});

/** The latest user message of a request: which turn the request belongs to. */
function userText(request: ChatCompletionRequest): string | null | undefined {
  return request.messages.findLast((message) => message.role === 'user')?.content;
}

const LOOP = '[always call tools]';
const ONE_TOOL = '[one tool call]';
const CRASH_BEFORE = '[worker crashes before the turn]';
const BREAK = '[the stream breaks once]';
const CRASH_AFTER = '[worker crashes after the turn]';

describe('chat turn with a scripted model', () => {
  let model: ScriptedModel;
  let runtime: LocalRuntime;
  let alice: ChatClient;
  let aliceLive: RealtimeListener;
  const deliveries: { chatMessageId: string; deliveryCount: unknown }[] = [];

  // The chat worker as deployed, except that the first delivery of a marked message fails.
  const flakyWorker = functionDefinitions.map((definition): FunctionDefinition => {
    if (definition.kind !== 'serviceBus' || definition.name !== 'chatWorker') return definition;
    const handler = async (message: unknown, context: InvocationContext) => {
      const { chatMessageId, text } = message as QueuedChatMessage;
      const deliveryCount = context.triggerMetadata?.deliveryCount;
      deliveries.push({ chatMessageId, deliveryCount });
      if (deliveryCount === 1 && text.includes(CRASH_BEFORE)) throw new Error('the worker crashed');
      await definition.handler(message, context);
      if (deliveryCount === 1 && text.includes(CRASH_AFTER)) throw new Error('the worker crashed');
    };
    return { ...definition, handler };
  });

  beforeAll(async () => {
    model = await startScriptedModel((request) => {
      const text = userText(request) ?? '';
      if (text.includes(LOOP)) return { toolCalls: [{ name: 'add_numbers', arguments: '{"a":1,"b":2}' }] };
      if (text.includes(ONE_TOOL) && !request.messages.some((message) => message.role === 'tool'))
        return { toolCalls: [{ name: 'add_numbers', arguments: '{"a":20,"b":22}' }] };
      if (text.includes(BREAK) && requestsFor(text).length === 1)
        return { content: `A first attempt at "${text}" that never ends`, breakAfterChunks: 4 };
      return { content: `Answer to "${text}".` };
    });
    runtime = await startTestRuntime({
      settings: { ...model.settings, CHAT_MAX_TOOL_ROUNDS: '2' },
      functions: flakyWorker,
    });
    alice = new ChatClient(runtime.url, 'user_001');
    aliceLive = await alice.listen();
  });
  afterAll(async () => {
    aliceLive?.stop();
    await runtime?.stop();
    await model?.close();
  });

  const requestsFor = (text: string) => model.requests.filter((request) => userText(request) === text);

  it('stops the tool loop after CHAT_MAX_TOOL_ROUNDS rounds and asks the model for text', async () => {
    const sessionId = await alice.startSession();
    const text = `add forever ${LOOP}`;
    const id = await alice.send(sessionId, text);
    const events = await aliceLive.waitForTerminal(id);

    expect(seqs(events)).toEqual(oneTo(events.length));
    expect(ofType(events, 'tool-call').map((event) => event.round)).toEqual([0, 1]);
    expect(ofType(events, 'tool-result').map((event) => event.round)).toEqual([0, 1]);
    expect(ofType(events, 'tool-result').every((event) => event.result.includes('3'))).toBe(true);
    expect(events.at(-1)).toMatchObject({ type: 'message-end', finishReason: 'tool_rounds_exhausted' });

    const requests = requestsFor(text);
    expect(requests.map((request) => request.tool_choice)).toEqual(['auto', 'auto', 'none']);
    // The last request still shows the tools, and everything the two rounds did.
    expect(requests[2]?.tools?.map((tool) => tool.function.name)).toContain('add_numbers');
    expect(requests[2]?.messages.filter((message) => message.role === 'tool')).toHaveLength(2);

    const [, assistant] = await committed(runtime, 'user_001', sessionId, id);
    expect(assistant).toMatchObject({ role: 'assistant', finishReason: 'tool_rounds_exhausted' });
    expect(assistant?.toolCalls).toHaveLength(2);
  });

  it('hands a turn whose first round asked for a tool to the orchestration, which runs the tool once and answers', async () => {
    const sessionId = await alice.startSession();
    const text = `add 20 and 22 ${ONE_TOOL}`;
    const id = await alice.send(sessionId, text);
    const events = await aliceLive.waitForTerminal(id);
    await runtime.serviceBus.idle();

    expect(seqs(events)).toEqual(oneTo(events.length));
    expect(ofType(events, 'tool-call').map((event) => event.round)).toEqual([0]);
    expect(ofType(events, 'tool-result')).toEqual([expect.objectContaining({ round: 0, isError: false })]);
    expect(ofType(events, 'tool-result')[0]?.result).toContain('42');
    expect(events.at(-1)).toMatchObject({ type: 'message-end', finishReason: 'stop' });
    expect(requestsFor(text)).toHaveLength(2);
    const [, assistant] = await committed(runtime, 'user_001', sessionId, id);
    expect(assistant?.toolCalls).toHaveLength(1);
    expect(assistant?.content).toBe(assembleText(events));

    const instance = await expectTurnInstance(runtime, sessionId, id, 'Completed', true);
    // The worker's round 0 is in the orchestration's input: the orchestration began at its tool call.
    if (runtime.app.config.chat.firstRound === 'worker')
      expect(instance?.input).toMatchObject({
        firstRound: { outcome: 'tools', toolCalls: [{ index: 0, name: 'add_numbers' }] },
      });
    else expect(instance?.input).not.toHaveProperty('firstRound');
  });

  it('answers a message whose first delivery failed before the turn started, once', async () => {
    const sessionId = await alice.startSession();
    const text = `hello ${CRASH_BEFORE}`;
    const id = await alice.send(sessionId, text);
    await expectAnsweredOnce(sessionId, id, text);
  });

  it('does not answer again when the worker failed after the turn ended', async () => {
    const sessionId = await alice.startSession();
    const text = `hello ${CRASH_AFTER}`;
    const id = await alice.send(sessionId, text);
    await expectAnsweredOnce(sessionId, id, text);
  });

  async function expectAnsweredOnce(sessionId: string, id: string, text: string) {
    const events = await aliceLive.waitForTerminal(id);
    await runtime.serviceBus.idle();
    await drainRealtime(runtime, 'user_001', aliceLive);

    expect(deliveries.filter((d) => d.chatMessageId === id).map((d) => d.deliveryCount)).toEqual([1, 2]);
    expect(runtime.serviceBus.deadLetters({ queueName: USER_MESSAGES_QUEUE })).toEqual([]);
    expect(requestsFor(text)).toHaveLength(1);
    expect(events.at(-1)).toMatchObject({ type: 'message-end', finishReason: 'stop' });
    expect(types(aliceLive.arrived(id)).filter((type) => type === 'message-start')).toHaveLength(1);
    expect(assembleText(events)).toBe(`Answer to "${text}".`);
    const messages = await committed(runtime, 'user_001', sessionId);
    expect(messages.map((message) => [message.role, message.content])).toEqual([
      ['user', text],
      ['assistant', `Answer to "${text}".`],
    ]);
  }

  it('streams a round anew after the model stream broke, and every client ends with the committed answer', async () => {
    const sessionId = await alice.startSession();
    const text = `hello ${BREAK}`;
    const id = await alice.send(sessionId, text);
    const live = await aliceLive.waitForTerminal(id);

    expect(requestsFor(text)).toHaveLength(2);
    expect(seqs(live)).toEqual(oneTo(live.length));
    const discard = ofType(live, 'discard');
    expect(discard).toHaveLength(1);
    const voided = live.filter((e) => e.seq >= discard[0]!.fromSeq && e.seq <= discard[0]!.toSeq);
    expect(voided.map((e) => (e.type === 'content' ? e.delta : '')).join('')).toContain('A first attempt');
    expect(live.at(-1)).toMatchObject({ type: 'message-end', finishReason: 'stop' });
    expect(answerText(live)).toBe(`Answer to "${text}".`);

    // A replay gives the same events, and the stored answer is the text the protocol shows.
    const replay = sseEvents(await alice.stream(sessionId, id));
    expect(replay).toEqual(live);
    const [, assistant] = await committed(runtime, 'user_001', sessionId, id);
    expect(assistant?.content).toBe(answerText(live));
  });

  it('answers two quick messages of a session in order, the second seeing the first', async () => {
    const sessionId = await alice.startSession();
    const first = await alice.send(sessionId, 'first question');
    const second = await alice.send(sessionId, 'second question');
    await Promise.all([aliceLive.waitForTerminal(first), aliceLive.waitForTerminal(second)]);

    const arrivals = aliceLive.arrivals;
    const firstEnd = arrivals.findIndex((e) => e.chatMessageId === first && e.type === 'message-end');
    const secondStart = arrivals.findIndex((e) => e.chatMessageId === second && e.type === 'message-start');
    expect(firstEnd).toBeGreaterThanOrEqual(0);
    expect(secondStart).toBeGreaterThan(firstEnd);

    const [request] = requestsFor('second question');
    const conversation = request?.messages
      .filter((message) => message.role === 'user' || message.role === 'assistant')
      .map((message) => [message.role, message.content]);
    expect(conversation).toEqual([
      ['user', 'first question'],
      ['assistant', 'Answer to "first question".'],
      ['user', 'second question'],
    ]);
    expect((await committed(runtime, 'user_001', sessionId)).map((message) => message.messageId)).toEqual([
      `${first}_user`,
      `${first}_assistant`,
      `${second}_user`,
      `${second}_assistant`,
    ]);
  });
});
