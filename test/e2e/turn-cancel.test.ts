// Stopping a turn end to end as a client does it, against the local runtime at a realistic pace: the
// committed answer is the text shown, whichever instance took the stop, and others' stops and bad ids are
// refused.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cancelTurnEndpoint } from '../../functions/chat.js';
import type { LocalRuntime } from '../../local/runtime.js';
import type { App } from '../../shared/app/app.js';
import { CANCELLED_FINISH_REASON } from '../../shared/chat/contracts/activities.js';
import { isTerminalEvent, type ChatEvent } from '../../shared/streaming/contracts.js';
import { answerText } from '../../shared/streaming/turn-transcript.js';
import { asUser, callEndpoint } from '../support/call-endpoint.js';
import {
  ChatClient,
  assembleText,
  expectStatus,
  oneTo,
  seqs,
  type RealtimeListener,
} from '../support/chat-client.js';
import { settle, startTestRuntime } from '../support/local-runtime.js';
import { turnInstanceId } from '../../shared/conversation/turn-ids.js';
import { secondInstance } from '../../local/second-instance.js';

/** An answer of this many words takes the offline model about 5 s at this pace: plenty of time to stop it. */
const LONG_ANSWER = 'reply with 400 words';
const PACE = { OFFLINE_MODEL_TTFT_MS: '0', OFFLINE_MODEL_TOKENS_PER_SECOND: '80' };

async function committedAnswer(
  runtime: LocalRuntime,
  userId: string,
  sessionId: string,
  chatMessageId: string,
) {
  const memory = await runtime.app.chat.turn.workingMemory.load(userId, sessionId);
  return memory.messages.filter((message) => message.chatMessageId === chatMessageId);
}

/** The turn's whole log, as stored: the truth every client's view is checked against. */
function storedEvents(runtime: LocalRuntime, sessionId: string, chatMessageId: string): Promise<ChatEvent[]> {
  return runtime.app.streaming.turnEvents.read(sessionId, chatMessageId, 0);
}

function cancelUrl(runtime: LocalRuntime, sessionId: string, chatMessageId: string): string {
  return `${runtime.url}/api/chat/${sessionId}/${chatMessageId}/cancel`;
}

async function cancel(runtime: LocalRuntime, client: ChatClient, sessionId: string, chatMessageId: string) {
  return fetch(cancelUrl(runtime, sessionId, chatMessageId), { method: 'POST', headers: client.headers() });
}

async function waitUntil(condition: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('the condition did not hold in time');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** Every check of a turn that ended: gap-free log, one terminal event, and the committed answer equal to the shown text. */
async function expectOneEnd(runtime: LocalRuntime, userId: string, sessionId: string, chatMessageId: string) {
  const events = await storedEvents(runtime, sessionId, chatMessageId);
  expect(seqs(events)).toEqual(oneTo(events.length));
  expect(events.filter(isTerminalEvent).map((event) => event.type)).toEqual(['message-end']);
  const end = events.at(-1);
  const finishReason = end?.type === 'message-end' ? end.finishReason : undefined;
  const [, assistant] = await committedAnswer(runtime, userId, sessionId, chatMessageId);
  expect(assistant).toMatchObject({ role: 'assistant', content: answerText(events), finishReason });
  return { events, finishReason, text: answerText(events) };
}

describe('stopping a turn on one instance', () => {
  let runtime: LocalRuntime;
  let alice: ChatClient;
  let aliceLive: RealtimeListener;

  beforeAll(async () => {
    // A poll far longer than any turn here: only the in-process signal can stop these streams in time.
    runtime = await startTestRuntime({ settings: { ...PACE, CHAT_CANCEL_POLL_MS: '60000' } });
    alice = new ChatClient(runtime.url, 'user_001');
    aliceLive = await alice.listen();
  });
  afterAll(async () => {
    aliceLive?.stop();
    await runtime?.stop();
  });

  it('stops a long answer mid-stream: the client sees cancelled, and the answer committed is what it received', async () => {
    const sessionId = await alice.startSession();
    const id = await alice.send(sessionId, LONG_ANSWER);
    await waitUntil(() => aliceLive.events(id).filter((event) => event.type === 'content').length >= 3);

    const stopping = await cancel(runtime, alice, sessionId, id);
    expect(stopping.status).toBe(202);
    expect(await stopping.json()).toEqual({ sessionId, chatMessageId: id, status: 'cancelling' });
    const live = await aliceLive.waitForTerminal(id);
    expect(live.at(-1)).toMatchObject({ type: 'message-end', finishReason: CANCELLED_FINISH_REASON });
    const received = assembleText(live);
    const words = received.trim().split(/\s+/).length;
    expect(words).toBeGreaterThan(0);
    expect(words).toBeLessThan(400);

    const { events, text } = await expectOneEnd(runtime, 'user_001', sessionId, id);
    expect(text).toBe(received);
    expect(events).toEqual(live);
    // A late client replays the same stream; the model was stopped by the signal, with no poll.
    expect((await alice.stream(sessionId, id)).map((frame) => frame.data)).toEqual(live);
    expect(runtime.app.chat.cancellations.stats()).toMatchObject({ stoppedByPoll: 0 });
    expect(runtime.app.chat.cancellations.stats().stoppedHere).toBeGreaterThanOrEqual(1);

    // Stopping it again is harmless, and says the turn has finished, and how.
    const again = await cancel(runtime, alice, sessionId, id);
    expect(again.status).toBe(200);
    expect(await again.json()).toEqual({
      sessionId,
      chatMessageId: id,
      status: 'finished',
      finishReason: CANCELLED_FINISH_REASON,
    });

    // Announced as any answer: long-term history keeps the stopped answer as it was committed.
    await settle(runtime);
    const conversation = await expectStatus<{
      messages: { role: string; content: string; finishReason?: string }[];
    }>(
      await fetch(`${runtime.url}/api/history/conversations/${sessionId}?order=asc`, {
        headers: alice.headers(),
      }),
      200,
    );
    expect(conversation.messages.at(-1)).toMatchObject({
      role: 'assistant',
      content: received,
      finishReason: CANCELLED_FINISH_REASON,
    });
  });

  it('commits the user message and an empty answer for a turn stopped while it waited in the queue', async () => {
    const sessionId = await alice.startSession();
    const first = await alice.send(sessionId, 'reply with 60 words');
    const second = await alice.send(sessionId, LONG_ANSWER);
    const stopping = await cancel(runtime, alice, sessionId, second);
    expect(stopping.status).toBe(202);

    const firstEvents = await aliceLive.waitForTerminal(first);
    expect(firstEvents.at(-1)).toMatchObject({ type: 'message-end', finishReason: 'stop' });
    const secondEvents = await aliceLive.waitForTerminal(second);
    expect(secondEvents.map((event) => event.type)).toEqual(['message-start', 'message-end']);
    expect(secondEvents.at(-1)).toMatchObject({ finishReason: CANCELLED_FINISH_REASON });
    expect(await committedAnswer(runtime, 'user_001', sessionId, second)).toEqual([
      expect.objectContaining({ role: 'user', content: LONG_ANSWER }),
      expect.objectContaining({ role: 'assistant', content: '', finishReason: CANCELLED_FINISH_REASON }),
    ]);
  });

  it("refuses another user's stop (404) and bad ids (400), as problem+json, and leaves the turn running", async () => {
    const bob = new ChatClient(runtime.url, 'user_002');
    const sessionId = await alice.startSession();
    const id = await alice.send(sessionId, 'reply with 80 words');

    const intruding = await cancel(runtime, bob, sessionId, id);
    expect(intruding.status).toBe(404);
    expect(intruding.headers.get('content-type')).toBe('application/problem+json');
    expect(await intruding.json()).toMatchObject({ status: 404, code: 'not_found' });
    const unknown = await cancel(runtime, alice, sessionId, randomUUID());
    expect(unknown.status).toBe(404);
    for (const [session, turn] of [
      ['not-a-session', id],
      [sessionId, 'not-a-turn'],
    ] as const) {
      const bad = await fetch(cancelUrl(runtime, session, turn), {
        method: 'POST',
        headers: alice.headers(),
      });
      expect(bad.status).toBe(400);
      expect(bad.headers.get('content-type')).toBe('application/problem+json');
      expect(await bad.json()).toMatchObject({ status: 400, code: 'validation_failed' });
    }

    const events = await aliceLive.waitForTerminal(id);
    expect(events.at(-1)).toMatchObject({ type: 'message-end', finishReason: 'stop' });
    expect(assembleText(events).trim().split(/\s+/)).toHaveLength(80);
  });

  it('leaves exactly one terminal event whenever the stop comes, before, during or after the natural end', async () => {
    // Short answers (about 0.4 s of text each), stopped at once, at times spread over their text from its first
    // delta on (some land on the natural end), and after their end: however busy the machine, both sides are met.
    const plans: ('at-once' | 'after-end' | number)[] = [
      'at-once',
      ...Array.from({ length: 14 }, (_, i) => i * 30),
      'after-end',
    ];
    const turns: { sessionId: string; id: string; plan: (typeof plans)[number]; status: number }[] = [];
    // A few at a time, so each stop's timing is its own rather than the machine's queue.
    for (let first = 0; first < plans.length; first += 4) {
      const wave = plans.slice(first, first + 4).map(async (plan) => {
        const sessionId = await alice.startSession();
        const id = await alice.send(sessionId, 'reply with 30 words');
        if (plan === 'after-end') await aliceLive.waitForTerminal(id, 20_000);
        else if (plan !== 'at-once') {
          await waitUntil(() => aliceLive.events(id).some((event) => event.type === 'content'), 20_000);
          await new Promise((resolve) => setTimeout(resolve, plan));
        }
        const reply = await cancel(runtime, alice, sessionId, id);
        expect([200, 202]).toContain(reply.status);
        await aliceLive.waitForTerminal(id, 20_000);
        return { sessionId, id, plan, status: reply.status };
      });
      turns.push(...(await Promise.all(wave)));
    }
    await settle(runtime);
    const outcomes: string[] = [];
    for (const turn of turns) {
      const { finishReason, events } = await expectOneEnd(runtime, 'user_001', turn.sessionId, turn.id);
      expect([CANCELLED_FINISH_REASON, 'stop']).toContain(finishReason);
      // A stop answered "finished" came after the end: the answer is whole.
      if (turn.status === 200) expect(finishReason).toBe('stop');
      if (turn.plan === 'after-end') expect(turn.status).toBe(200);
      if (finishReason === 'stop') expect(answerText(events).trim().split(/\s+/)).toHaveLength(30);
      expect(aliceLive.arrived(turn.id).filter(isTerminalEvent)).toHaveLength(1);
      outcomes.push(finishReason ?? '');
    }
    // The spread covers both sides of the race.
    expect(outcomes).toContain(CANCELLED_FINISH_REASON);
    expect(outcomes).toContain('stop');
  });
});

describe('stopping a turn that runs on another instance', () => {
  let runtime: LocalRuntime;
  /** A second composition of the app over the same local services: the instance that takes the stop request. */
  let other: App;
  let alice: ChatClient;
  let aliceLive: RealtimeListener;

  beforeAll(async () => {
    runtime = await startTestRuntime({ settings: { ...PACE, CHAT_CANCEL_POLL_MS: '200' } });
    other = secondInstance(runtime);
    alice = new ChatClient(runtime.url, 'user_001');
    aliceLive = await alice.listen();
  });
  afterAll(async () => {
    aliceLive?.stop();
    await other?.close();
    await runtime?.stop();
  });

  it("stops the stream through the record the other instance wrote, found by the running step's poll", async () => {
    const sessionId = await alice.startSession();
    const id = await alice.send(sessionId, LONG_ANSWER);
    await waitUntil(() => aliceLive.events(id).filter((event) => event.type === 'content').length >= 3);
    const before = runtime.app.chat.cancellations.stats();

    const reply = await callEndpoint(cancelTurnEndpoint, other, {
      headers: asUser('user_001'),
      path: `/api/chat/${sessionId}/${id}/cancel`,
      params: { sessionId, chatMessageId: id },
    });
    expect(reply.status).toBe(202);
    const live = await aliceLive.waitForTerminal(id);
    expect(live.at(-1)).toMatchObject({ type: 'message-end', finishReason: CANCELLED_FINISH_REASON });
    const { text } = await expectOneEnd(runtime, 'user_001', sessionId, id);
    expect(text).toBe(assembleText(live));
    expect(text.trim().split(/\s+/).length).toBeLessThan(400);

    // The running instance was stopped by its poll, never by a signal; the other had no stream to signal.
    const after = runtime.app.chat.cancellations.stats();
    expect(after.stoppedByPoll - before.stoppedByPoll).toBe(1);
    expect(after.stoppedHere - before.stoppedHere).toBe(0);
    expect(other.chat.cancellations.stats()).toMatchObject({ watches: 0, stoppedHere: 0 });
    // With CHAT_FIRST_ROUND=worker the round stopped was the chat worker's own round 0: no orchestration ran.
    if (runtime.app.config.chat.firstRound === 'worker')
      expect(await runtime.durable.getStatus(turnInstanceId(sessionId, id))).toBeUndefined();
  });
});
