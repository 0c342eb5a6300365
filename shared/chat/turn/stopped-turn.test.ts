// Stopping a turn, at the level of its activities over in-memory ports: the model's stream is aborted, tool calls
// not yet run are not run, and the text shown is committed with finish reason `cancelled` and one `message-end`,
// however the stop falls against the turn's steps and end, and whether the steps run once or again.
import { beforeEach, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../../test/support/in-memory-ports.js';
import { SteppedModel, type ScriptedRound } from '../../../test/support/stepped-model.js';
import type { LlmGateway, ToolCall } from '../../llm/llm-gateway.js';
import { isTerminalEvent, type ChatEvent } from '../../streaming/contracts.js';
import { answerText } from '../../streaming/turn-transcript.js';
import { CANCELLED_FINISH_REASON, type LlmStepInput } from '../contracts/activities.js';
import { MESSAGE_COMPLETED_TOPIC, messageCompletedSchema } from '../../conversation/message-completed.js';
import type { TurnRef } from '../../conversation/messages.js';
import { TurnCancelSignals } from '../cancellation/turn-cancel-signals.js';
import { llmStep } from './llm-step.js';
import { runTool } from './run-tool.js';
import type { TurnServices } from './turn-services.js';

const ref: TurnRef = {
  userId: 'user_001',
  sessionId: '0f8fad5b-d9cb-469f-a165-70867728950e',
  chatMessageId: '7c9e6679-7425-40de-944b-e07fc1f90ae7',
};
const TEXT = 'use the add_numbers tool to add 2 and 3';
const POSTED_AT = '2026-11-21T10:00:00.000Z';
const AT = '2026-11-21T10:00:01.000Z';
const ADD: ToolCall = { id: 'call_1', name: 'add_numbers', arguments: '{"a":2,"b":3}' };

const twoRounds: ScriptedRound[] = [
  { content: 'Let me add them.', toolCalls: [ADD] },
  { content: 'The sum of 2 and 3 is 5, as the tool says.' },
];

let app: TestApp;
let model: SteppedModel;

function services(overrides: Partial<TurnServices> = {}): TurnServices {
  return { ...app.chat.turn, llm: model as unknown as LlmGateway, ...overrides };
}

/** Runs the turn as the chatTurn orchestration does, calling `between` before each step. */
async function runTurn(
  turnServices: () => TurnServices,
  between: () => Promise<void> = () => Promise.resolve(),
): Promise<void> {
  let seq = 1;
  for (let round = 0; ; round++) {
    await between();
    const input: LlmStepInput = {
      ...ref,
      round,
      firstSeq: seq,
      toolsAllowed: true,
      ...(round === 0 ? { message: { text: TEXT, postedAt: POSTED_AT } } : {}),
    };
    const step = await llmStep(turnServices(), input);
    seq = step.nextSeq;
    if (step.outcome === 'answered') return;
    const first = seq;
    seq += step.toolCalls.length;
    for (const [position, call] of step.toolCalls.entries()) {
      await between();
      await runTool(turnServices(), { ...ref, round, index: call.index, seq: first + position });
    }
  }
}

function stored(): ChatEvent[] {
  return [...app.fakes.events.stored.values()].sort((a, b) => a.seq - b.seq);
}

function answer() {
  return app.fakes.workingMemory.messages.find((m) => m.messageId === `${ref.chatMessageId}_assistant`);
}

function announcements() {
  return app.fakes.publisher.published
    .filter((p) => p.entity === MESSAGE_COMPLETED_TOPIC)
    .map((p) => messageCompletedSchema.parse(p.message.body));
}

/** What a live client keeps of what it was sent: each seq once, as it first arrived. */
function firstArrivals(sent: readonly ChatEvent[]): ChatEvent[] {
  const seen = new Set<number>();
  return sent.filter((event) => !seen.has(event.seq) && seen.add(event.seq));
}

/**
 * What every turn must satisfy, stopped or not: one gap-free stream, one end, the shown text committed, once.
 * `retried`: a step ran again after an attempt that had stored events, which it sends again (that attempt may have
 * died before sending them).
 */
function expectOneCleanEnd(options: { retried?: boolean } = {}): { finishReason: string; text: string } {
  const events = stored();
  expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
  expect(events.filter(isTerminalEvent)).toHaveLength(1);
  const end = events.at(-1);
  expect(end?.type).toBe('message-end');
  const { sent } = app.fakes.events;
  if (options.retried) {
    // Every copy sent is the stored event, and a client keeping each seq once has the stored stream, in order.
    for (const event of sent) expect(event).toEqual(events[event.seq - 1]);
    expect(firstArrivals(sent)).toEqual(events);
  }
  // Everything stored was sent live, in order, and nothing else.
  else expect(sent).toEqual(events);
  const committed = answer();
  const text = answerText(events);
  expect(committed?.content).toBe(text);
  const finishReason = end?.type === 'message-end' ? end.finishReason : '';
  expect(committed?.finishReason).toBe(finishReason);
  // Announced as any answer (a repeat carries the same message id, which the broker drops).
  const announced = announcements();
  expect(announced.length).toBeGreaterThan(0);
  for (const message of announced) {
    expect(message.outcome).toBe('completed');
    expect(message.messages.find((m) => m.role === 'assistant')).toMatchObject({
      content: text,
      finishReason,
    });
  }
  return { finishReason, text };
}

beforeEach(() => {
  app = createTestApp();
  model = new SteppedModel(twoRounds);
});

describe('a stopped turn', () => {
  it('aborts the stream at once when the stop is taken in this process, and commits the text shown so far', async () => {
    model = new SteppedModel(twoRounds, async (call, index) => {
      if (call === 1 && index === 4) await app.chat.cancellations.request(ref, AT);
    });
    await runTurn(services);
    const { finishReason, text } = expectOneCleanEnd();
    expect(finishReason).toBe(CANCELLED_FINISH_REASON);
    expect(text).toBe('Let me add them.The sum of 2');
    expect(model.requests).toHaveLength(2);
    expect(model.requests.every((request) => request.signal !== undefined)).toBe(true);
    expect(app.chat.cancellations.stats()).toMatchObject({ stoppedHere: 1, stoppedByPoll: 0 });
    // The round's tool call ran; the usage of the finished round is kept.
    expect(answer()?.toolCalls).toEqual([expect.objectContaining({ id: 'call_1', isError: false })]);
    expect(answer()?.usage).toMatchObject({ completionTokens: 4 });
  });

  it('is found by the poll when another instance took the stop', async () => {
    const here = new TurnCancelSignals(app.fakes.cancellations, { pollIntervalMs: 20 });
    const elsewhere = new TurnCancelSignals(app.fakes.cancellations, { pollIntervalMs: 20 });
    const long: ScriptedRound[] = [{ content: Array.from({ length: 400 }, (_, i) => ` w${i}`).join('') }];
    model = new SteppedModel(long, async (_call, index) => {
      if (index === 5) await elsewhere.request(ref, AT);
      await new Promise((resolve) => setTimeout(resolve, 2));
    });
    await runTurn(() => services({ cancellation: here }));
    const { finishReason, text } = expectOneCleanEnd();
    expect(finishReason).toBe(CANCELLED_FINISH_REASON);
    const words = text.trim().split(/\s+/).length;
    expect(words).toBeGreaterThanOrEqual(5);
    expect(words).toBeLessThan(400);
    expect(here.stats()).toMatchObject({ stoppedHere: 0, stoppedByPoll: 1, watches: 1 });
    expect(elsewhere.stats()).toMatchObject({ stoppedHere: 0, watches: 0 });
  });

  it('is found as the stream opens when it came while the step prepared its round, after its own check', async () => {
    // A new conversation's round reads the profile after the step's check: the stop lands there, with no stream
    // open yet for the signal to reach.
    const profile: TurnServices['profile'] = {
      list: async (userId, options) => {
        await app.chat.cancellations.request(ref, AT);
        return app.fakes.facts.list(userId, options);
      },
    };
    const slow = () => new Promise<void>((resolve) => setTimeout(resolve, 2));
    model = new SteppedModel([{ content: Array.from({ length: 200 }, (_, i) => ` w${i}`).join('') }], slow);
    await runTurn(() => services({ profile }));
    const { finishReason, text } = expectOneCleanEnd();
    expect(finishReason).toBe(CANCELLED_FINISH_REASON);
    expect(text.trim().split(/\s+/).length).toBeLessThan(50);
    expect(app.chat.cancellations.stats()).toMatchObject({ stoppedHere: 0, stoppedByPoll: 1 });
  });

  it("sends the text the coalescer still held, with the stream's end, and commits it", async () => {
    model = new SteppedModel(
      [{ content: 'one two three four five six seven eight nine ten eleven twelve' }],
      async (_call, index) => {
        if (index === 9) await app.chat.cancellations.request(ref, AT);
      },
    );
    const coalescing = { flushIntervalMs: 60_000, flushMaxChars: 10_000 };
    await runTurn(() => services({ settings: { ...app.chat.turn.settings, coalescing } }));
    const { text } = expectOneCleanEnd();
    expect(text).toBe('one two three four five six seven eight nine');
    // The first delta went out at once; the rest was held until the stream ended.
    const batches = [...app.fakes.events.batches.values()].map((batch) => batch.map((e) => e.type));
    expect(batches.at(-1)).toEqual(['content', 'message-end']);
  });

  it('commits the user message and an empty cancelled answer, without calling the model, when stopped while queued', async () => {
    await app.chat.cancellations.request(ref, AT);
    await runTurn(services);
    const { finishReason, text } = expectOneCleanEnd();
    expect(finishReason).toBe(CANCELLED_FINISH_REASON);
    expect(text).toBe('');
    expect(model.requests).toHaveLength(0);
    expect(stored().map((e) => e.type)).toEqual(['message-start', 'message-end']);
    expect(app.fakes.workingMemory.messages.map((m) => [m.role, m.content])).toEqual([
      ['user', TEXT],
      ['assistant', ''],
    ]);
  });

  it('runs no tool call it had not started: each gets a "not run" result, and no model is asked again', async () => {
    const executed: string[] = [];
    const tools = app.chat.turn.tools;
    const recordingTools = Object.assign(Object.create(tools) as typeof tools, {
      execute: (...args: Parameters<typeof tools.execute>) => {
        executed.push(args[0].name);
        return tools.execute(...args);
      },
    });
    model = new SteppedModel([
      { content: 'Adding.', toolCalls: [ADD, { ...ADD, id: 'call_2' }] },
      { content: 'x' },
    ]);
    let steps = 0;
    // The stop comes after round 0 recorded its calls, before the first of them runs.
    await runTurn(
      () => services({ tools: recordingTools }),
      async () => {
        if (++steps === 2) await app.chat.cancellations.request(ref, AT);
      },
    );
    const { finishReason, text } = expectOneCleanEnd();
    expect(finishReason).toBe(CANCELLED_FINISH_REASON);
    expect(text).toBe('Adding.');
    expect(executed).toEqual([]);
    expect(model.requests).toHaveLength(1);
    const results = stored().filter((e) => e.type === 'tool-result');
    expect(results).toHaveLength(2);
    for (const result of results)
      expect(result).toMatchObject({ isError: true, result: expect.stringMatching(/Not run/) });
    expect(answer()?.toolCalls).toEqual([
      expect.objectContaining({ id: 'call_1', isError: true, result: expect.stringMatching(/Not run/) }),
      expect.objectContaining({ id: 'call_2', isError: true, result: expect.stringMatching(/Not run/) }),
    ]);
  });

  it('drops the tool calls of a round stopped while it streamed', async () => {
    model = new SteppedModel(twoRounds, async (call, index) => {
      if (call === 0 && index === 4) await app.chat.cancellations.request(ref, AT);
    });
    await runTurn(services);
    const { text } = expectOneCleanEnd();
    expect(text).toBe('Let me add them.');
    expect(stored().some((e) => e.type === 'tool-call')).toBe(false);
    expect(answer()?.toolCalls).toBeUndefined();
  });

  it('commits what the client was shown when a step that died mid-answer is retried after the stop', async () => {
    class Died extends Error {}
    let alive = true;
    model = new SteppedModel(twoRounds, (call, index) => {
      if (alive && call === 1 && index === 3) {
        alive = false;
        return Promise.reject(new Died('the process died'));
      }
      return Promise.resolve();
    });
    await expect(runTurn(services)).rejects.toMatchObject({ cause: expect.any(Died) });
    const shown = answerText(stored());
    expect(shown).toBe('Let me add them.The sum of');
    await app.chat.cancellations.request(ref, AT);
    // Durable retries the round: it calls no model, voids nothing, and commits what was shown.
    const requests = model.requests.length;
    const toolResult = stored().find((e) => e.type === 'tool-result');
    await llmStep(services(), { ...ref, round: 1, firstSeq: (toolResult?.seq ?? 0) + 1, toolsAllowed: true });
    const { finishReason, text } = expectOneCleanEnd({ retried: true });
    expect(finishReason).toBe(CANCELLED_FINISH_REASON);
    expect(text).toBe(shown);
    expect(model.requests).toHaveLength(requests);
    expect(stored().some((e) => e.type === 'discard')).toBe(false);
  });

  it('voids tool calls a dead attempt announced but never recorded, and keeps its text', async () => {
    // An attempt stored its text and its tool calls, then died before recording the round.
    const stamp = (body: object, seq: number) =>
      ({ ...body, sessionId: ref.sessionId, chatMessageId: ref.chatMessageId, seq }) as ChatEvent;
    await app.fakes.events.append([
      stamp(
        {
          type: 'message-start',
          userMessageId: `${ref.chatMessageId}_user`,
          assistantMessageId: `${ref.chatMessageId}_assistant`,
        },
        1,
      ),
    ]);
    await app.fakes.events.append([
      stamp({ type: 'content', delta: 'Let me add them.' }, 2),
      stamp(
        { type: 'tool-call', round: 0, toolCallId: 'call_1', name: 'add_numbers', arguments: ADD.arguments },
        3,
      ),
    ]);
    await app.chat.cancellations.request(ref, AT);
    await llmStep(services(), {
      ...ref,
      round: 0,
      firstSeq: 1,
      toolsAllowed: true,
      message: { text: TEXT, postedAt: POSTED_AT },
    });
    expect(stored().map((e) => e.type)).toEqual([
      'message-start',
      'content',
      'tool-call',
      'discard',
      'message-end',
    ]);
    expect(stored()[3]).toMatchObject({ fromSeq: 3, toSeq: 3 });
    const events = stored();
    expect(events.filter(isTerminalEvent)).toHaveLength(1);
    expect(answer()).toMatchObject({ content: 'Let me add them.', finishReason: CANCELLED_FINISH_REASON });
    expect(model.requests).toHaveLength(0);
  });

  it('closes the reasoning a dead attempt left open before the stream ends', async () => {
    // An attempt streamed part of its reasoning, then died; the stop is found when the round runs again.
    const stamp = (body: object, seq: number) =>
      ({ ...body, sessionId: ref.sessionId, chatMessageId: ref.chatMessageId, seq }) as ChatEvent;
    await app.fakes.events.append([
      stamp(
        {
          type: 'message-start',
          userMessageId: `${ref.chatMessageId}_user`,
          assistantMessageId: `${ref.chatMessageId}_assistant`,
        },
        1,
      ),
    ]);
    await app.fakes.events.append([stamp({ type: 'reasoning-delta', delta: 'Adding two' }, 2)]);
    await app.chat.cancellations.request(ref, AT);
    await llmStep(services(), {
      ...ref,
      round: 0,
      firstSeq: 1,
      toolsAllowed: true,
      message: { text: TEXT, postedAt: POSTED_AT },
    });
    expect(stored().map((e) => e.type)).toEqual([
      'message-start',
      'reasoning-delta',
      'reasoning-end',
      'message-end',
    ]);
    expect(answer()).toMatchObject({ content: '', finishReason: CANCELLED_FINISH_REASON });
    expect(model.requests).toHaveLength(0);
  });

  it('reaches the same committed answer, with no second end, when its steps run again after the stop', async () => {
    model = new SteppedModel(twoRounds, async (call, index) => {
      if (call === 1 && index === 2) await app.chat.cancellations.request(ref, AT);
    });
    await runTurn(services);
    const before = stored();
    const committed = answer();
    // Every step of the turn again, as Durable replays after a crash: nothing changes.
    model = new SteppedModel([]);
    await runTurn(services);
    expect(stored()).toEqual(before);
    expect(answer()).toEqual(committed);
    expectOneCleanEnd();
  });

  it('ends with exactly one terminal event wherever the stop falls against the steps and the natural end', async () => {
    // Count the points of an unstopped run: before each step and each model delta, and once after the end.
    let points = 0;
    model = new SteppedModel(twoRounds, () => Promise.resolve(void points++));
    await runTurn(services, () => Promise.resolve(void points++));
    points++;
    expect(points).toBeGreaterThan(15);

    const outcomes = new Map<string, number>();
    for (let stopAt = 0; stopAt <= points; stopAt++) {
      app = createTestApp();
      let point = 0;
      const tick = async () => {
        if (point++ === stopAt) await app.chat.cancellations.request(ref, AT);
      };
      model = new SteppedModel(twoRounds, tick);
      await runTurn(services, tick);
      await tick();
      const { finishReason, text } = expectOneCleanEnd();
      expect([CANCELLED_FINISH_REASON, 'stop']).toContain(finishReason);
      if (stopAt === 0) expect(text).toBe('');
      if (stopAt === points) expect(finishReason).toBe('stop');
      outcomes.set(finishReason, (outcomes.get(finishReason) ?? 0) + 1);
    }
    expect(outcomes.get(CANCELLED_FINISH_REASON)).toBeGreaterThan(10);
    expect(outcomes.get('stop')).toBeGreaterThanOrEqual(1);
  });
});
