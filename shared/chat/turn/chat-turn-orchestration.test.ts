// The chatTurn orchestrator driven by a hand-written context: each activity it schedules is recorded with its
// input and answered from a script, so the test reads what every activity of a turn is told.
import type * as df from 'durable-functions';
import { describe, expect, it } from 'vitest';
import { chatTurnOrchestrator, llmStepInputOf } from './chat-turn-orchestration.js';
import { TURN_ACTIVITIES, type ChatTurnInput, type LlmStepOutput } from '../contracts/activities.js';
import { TurnStepError } from './turn-failure.js';

interface Scheduled {
  name: string;
  input: Record<string, unknown>;
}

/** What the orchestrator yields: one activity, several at once, or the first of an event and a timer. */
type FakeTask =
  | { activity: Scheduled }
  | { all: FakeTask[] }
  | { any: FakeTask[] }
  | { event: string; result?: unknown }
  | { timer: Date; cancel: () => void };

/**
 * Runs the orchestrator to its end. `answer` gives each activity's result (throwing fails it, as an activity that
 * ran out of retries does).
 */
function drive(
  input: ChatTurnInput,
  answer: (activity: Scheduled) => unknown,
  approvals: Record<string, unknown> = {},
): Scheduled[] {
  const scheduled: Scheduled[] = [];
  const context = {
    error: () => undefined,
    df: {
      isReplaying: false,
      currentUtcDateTime: new Date('2026-11-21T10:00:05.000Z'),
      getInput: () => input,
      setCustomStatus: (status: unknown) => {
        scheduled.push({ name: 'status', input: { status } });
      },
      createTimer: (timer: Date) => ({ timer, cancel: () => undefined }) satisfies FakeTask,
      waitForExternalEvent: (event: string) => ({ event }) satisfies FakeTask,
      callActivityWithRetry: (name: string, _retry: unknown, activityInput: Record<string, unknown>) =>
        ({ activity: { name, input: activityInput } }) satisfies FakeTask,
      Task: {
        all: (tasks: FakeTask[]) => ({ all: tasks }) satisfies FakeTask,
        any: (tasks: FakeTask[]) => ({ any: tasks }) satisfies FakeTask,
      },
    },
  } as unknown as df.OrchestrationContext;
  const generator = chatTurnOrchestrator(context);
  const settle = (task: FakeTask): unknown => {
    if ('all' in task) return task.all.map(settle);
    // The user's answer when the script has one for the event, else the timer fires first.
    if ('any' in task) {
      const event = task.any.find((each) => 'event' in each && Object.hasOwn(approvals, each.event));
      if (event && 'event' in event) event.result = approvals[event.event];
      return event ?? task.any.find((each) => 'timer' in each);
    }
    // A timer yielded alone (waiting for a free quota slot) simply fires.
    if ('timer' in task) {
      scheduled.push({ name: 'timer', input: {} });
      return undefined;
    }
    if (!('activity' in task)) throw new Error('Only an activity, all, any or a timer is yielded.');
    scheduled.push(task.activity);
    return answer(task.activity);
  };
  let next = generator.next();
  while (!next.done) {
    let result: unknown;
    let failure: unknown;
    try {
      result = settle(next.value as unknown as FakeTask);
    } catch (error) {
      failure = error;
    }
    next = failure === undefined ? generator.next(result) : generator.throw(failure);
  }
  return scheduled;
}

const queued: ChatTurnInput = {
  userId: 'user_001',
  sessionId: '0f8fad5b-d9cb-469f-a165-70867728950e',
  chatMessageId: '7c9e6679-7425-40de-944b-e07fc1f90ae7',
  text: 'what did we talk about last time?',
  postedAt: '2026-11-21T10:00:00.000Z',
  maxToolRounds: 10,
};

/** Round 0 asks for one tool, round 1 answers. */
function toolThenAnswer({ name, input }: Scheduled): unknown {
  if (name === TURN_ACTIVITIES.runTool) return { isError: false };
  return input['round'] === 0
    ? ({
        outcome: 'tools',
        nextSeq: 3,
        toolCalls: [{ index: 0, name: 'search_conversation_history' }],
        finishReason: 'tool_calls',
      } satisfies LlmStepOutput)
    : ({ outcome: 'answered', nextSeq: 9, toolCalls: [], finishReason: 'stop' } satisfies LlmStepOutput);
}

describe('the chatTurn orchestration', () => {
  it('tells every activity of a use_memory false turn, so none reads or writes long-term memory', () => {
    const activities = drive({ ...queued, useMemory: false }, toolThenAnswer);
    expect(activities.map((a) => a.name)).toEqual(['llmStep', 'runTool', 'llmStep']);
    for (const activity of activities) expect(activity.input).toMatchObject({ useMemory: false });

    const failed = drive({ ...queued, useMemory: false }, ({ name }) => {
      if (name === TURN_ACTIVITIES.llmStep)
        throw new TurnStepError('llm_unavailable', new Error('the model is down'));
      return undefined;
    });
    expect(failed.map((a) => a.name)).toEqual(['llmStep', 'failTurn']);
    expect(failed[1]?.input).toMatchObject({ useMemory: false, userText: queued.text });
  });

  it('leaves the flag out when memory is on, as the contract reads an absent flag', () => {
    for (const input of [queued, { ...queued, useMemory: true }]) {
      const activities = drive(input, toolThenAnswer);
      expect(activities).toHaveLength(3);
      for (const activity of activities) expect(activity.input).not.toHaveProperty('useMemory');
    }
  });

  it('starts at the tool calls of a round 0 the chat worker ran, and goes on from its seq', () => {
    const firstRound: ChatTurnInput['firstRound'] = {
      outcome: 'tools',
      nextSeq: 4,
      toolCalls: [
        { index: 0, name: 'search_conversation_history' },
        { index: 1, name: 'search_knowledge' },
      ],
      finishReason: 'tool_calls',
    };
    const activities = drive({ ...queued, firstRound }, toolThenAnswer);
    expect(activities.map((a) => [a.name, a.input['round'], a.input['seq'] ?? a.input['firstSeq']])).toEqual([
      ['runTool', 0, 4],
      ['runTool', 0, 5],
      ['llmStep', 1, 6],
    ]);
    expect(activities[2]?.input).not.toHaveProperty('message');

    // A later round that fails ends the turn as an llmStep failure, as it would have without the worker's round.
    const failed = drive({ ...queued, firstRound }, ({ name }) => {
      if (name === TURN_ACTIVITIES.llmStep)
        throw new TurnStepError('llm_unavailable', new Error('the model is down'));
      return { isError: false };
    });
    expect(failed.map((a) => a.name)).toEqual(['runTool', 'runTool', 'llmStep', 'failTurn']);
    expect(failed[3]?.input).toMatchObject({ failure: { code: 'llm_unavailable' } });
  });

  it("asks round 0's step for the user's message, as the worker's round 0 does", () => {
    const activities = drive({ ...queued, useMemory: false }, toolThenAnswer);
    expect(activities[0]?.input).toEqual(
      llmStepInputOf({ ...queued, useMemory: false }, { round: 0, firstSeq: 1, toolRounds: 0 }),
    );
    expect(activities[0]?.input).toMatchObject({ message: { text: queued.text, postedAt: queued.postedAt } });
  });

  it('waits for the answer to a call that asked for approval, then runs it with the answer at the next seq', () => {
    const asking = (activity: Scheduled): unknown =>
      activity.name === TURN_ACTIVITIES.runTool &&
      activity.input['index'] === 1 &&
      activity.input['approval'] === undefined
        ? { isError: false, approval: { approvalId: '0-1', timeoutSeconds: 60 } }
        : toolThenAnswer(activity);
    const twoCalls = (activity: Scheduled): unknown =>
      activity.name === TURN_ACTIVITIES.llmStep && activity.input['round'] === 0
        ? ({
            outcome: 'tools',
            nextSeq: 3,
            toolCalls: [
              { index: 0, name: 'search_knowledge' },
              { index: 1, name: 'mcp__files__delete' },
            ],
            finishReason: 'tool_calls',
          } satisfies LlmStepOutput)
        : asking(activity);
    const approved = drive(queued, twoCalls, { 'approval:0-1': { approved: true } });
    expect(approved.map((a) => [a.name, a.input['index'], a.input['seq'] ?? a.input['firstSeq']])).toEqual([
      ['llmStep', undefined, 1],
      ['runTool', 0, 3],
      ['runTool', 1, 4],
      ['parkTurn', undefined, undefined],
      ['status', undefined, undefined],
      ['status', undefined, undefined],
      ['resumeTurn', undefined, undefined],
      ['runTool', 1, 5],
      ['llmStep', undefined, 6],
    ]);
    expect(approved[4]?.input).toEqual({ status: { status: 'awaiting-approval', approvalId: '0-1' } });
    expect(approved[5]?.input).toEqual({ status: null });
    expect(approved[7]?.input).toMatchObject({ approval: { approved: true } });

    // No slot free on resuming: the turn waits on a timer and asks again, then runs the call.
    let slotsAsked = 0;
    const noSlotAtFirst = (activity: Scheduled): unknown =>
      activity.name === TURN_ACTIVITIES.resume
        ? slotsAsked++ === 0
          ? { retryAfterSeconds: 2 }
          : {}
        : twoCalls(activity);
    const waited = drive(queued, noSlotAtFirst, { 'approval:0-1': { approved: true } });
    expect(waited.map((a) => a.name).slice(6, 10)).toEqual(['resumeTurn', 'timer', 'resumeTurn', 'runTool']);

    // No answer before the timer: the call is denied as timed out.
    const expired = drive(queued, twoCalls);
    expect(expired[7]?.input).toMatchObject({
      approval: { approved: false, reason: expect.stringMatching(/timed out/) },
    });
  });
});
