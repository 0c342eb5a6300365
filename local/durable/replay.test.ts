// The replay executor on hand-written histories: numbering, result order, buffering, non-determinism.
import type * as df from 'durable-functions';
import { describe, expect, it } from 'vitest';
import type { HistoryEvent } from './history.js';
import { replayOrchestration } from './replay.js';

const T0 = '2026-03-01T10:00:00.000Z';
const T1 = '2026-03-01T10:00:01.000Z';
const start: HistoryEvent[] = [{ type: 'orchestratorStarted', at: T0 }, { type: 'executionStarted' }];

function replay(handler: df.OrchestrationHandler, history: HistoryEvent[], input: unknown = undefined) {
  return replayOrchestration({
    handler,
    name: 'orch',
    instanceId: 'i-1',
    input,
    history,
    invocationId: 'inv',
  });
}

describe('replayOrchestration', () => {
  it('numbers the leaves of a yielded Task.all in order and reports them as new, pending work', () => {
    const result = replay(function* (context) {
      return (yield context.df.Task.all([
        context.df.callActivity('a', 1),
        context.df.createTimer(new Date(T1)),
      ])) as unknown;
    }, start);

    expect(result.scheduled).toEqual([
      { type: 'taskScheduled', seq: 0, kind: 'activity', name: 'a' },
      { type: 'taskScheduled', seq: 1, kind: 'timer', name: 'timer' },
    ]);
    expect(result.outcome).toEqual({
      status: 'running',
      pending: [
        { kind: 'activity', seq: 0, name: 'a', input: 1 },
        { kind: 'timer', seq: 1, fireAt: new Date(T1) },
      ],
    });
  });

  it('does not schedule tasks that are created but never yielded', () => {
    const result = replay(function* (context) {
      context.df.callActivity('forgotten');
      yield context.df.waitForExternalEvent('go');
      return 'done';
    }, start);

    expect(result.scheduled).toEqual([]);
    expect(result.outcome).toEqual({ status: 'running', pending: [] });
  });

  it('decides Task.any by the order results appear in the history, and returns the winning task', () => {
    const orchestrator: df.OrchestrationHandler = function* (context) {
      const work = context.df.callActivity('work');
      const timer = context.df.createTimer(new Date(T1));
      const winner: unknown = yield context.df.Task.any([work, timer]);
      return winner === timer ? 'timer' : 'work';
    };
    const scheduled: HistoryEvent[] = [
      ...start,
      { type: 'taskScheduled', seq: 0, kind: 'activity', name: 'work' },
      { type: 'taskScheduled', seq: 1, kind: 'timer', name: 'timer' },
      { type: 'orchestratorStarted', at: T1 },
    ];

    const timerFirst = replay(orchestrator, [
      ...scheduled,
      { type: 'timerFired', seq: 1 },
      { type: 'taskCompleted', seq: 0, result: 'late' },
    ]);
    const workFirst = replay(orchestrator, [
      ...scheduled,
      { type: 'taskCompleted', seq: 0, result: 'early' },
      { type: 'timerFired', seq: 1 },
    ]);

    expect(timerFirst.outcome).toEqual({ status: 'completed', output: 'timer' });
    expect(workFirst.outcome).toEqual({ status: 'completed', output: 'work' });
  });

  it('fails Task.all with its first failure, catchable, while leaving the sibling pending', () => {
    const result = replay(
      function* (context) {
        try {
          yield context.df.Task.all([context.df.callActivity('ok'), context.df.callActivity('bad')]);
          return 'no error';
        } catch (error) {
          yield context.df.waitForExternalEvent('after');
          return (error as Error).message;
        }
      },
      [
        ...start,
        { type: 'taskScheduled', seq: 0, kind: 'activity', name: 'ok' },
        { type: 'taskScheduled', seq: 1, kind: 'activity', name: 'bad' },
        { type: 'orchestratorStarted', at: T1 },
        { type: 'taskFailed', seq: 1, failure: { name: 'TypeError', message: 'bad input' } },
      ],
    );

    expect(result.outcome).toEqual({
      status: 'running',
      pending: [{ kind: 'activity', seq: 0, name: 'ok', input: undefined }],
    });
  });

  it('buffers events raised before the wait and hands them out in arrival order', () => {
    const result = replay(
      function* (context) {
        yield context.df.callActivity('first');
        const a: unknown = yield context.df.waitForExternalEvent('x');
        const b: unknown = yield context.df.waitForExternalEvent('x');
        return [a, b, context.df.currentUtcDateTime.toISOString()];
      },
      [
        ...start,
        { type: 'taskScheduled', seq: 0, kind: 'activity', name: 'first' },
        { type: 'orchestratorStarted', at: T0 },
        { type: 'eventRaised', name: 'x', data: 1 },
        { type: 'eventRaised', name: 'x', data: 2 },
        { type: 'orchestratorStarted', at: T1 },
        { type: 'taskCompleted', seq: 0 },
      ],
    );

    expect(result.outcome).toEqual({ status: 'completed', output: [1, 2, T1] });
  });

  it('drops a cancelled timer from the pending work', () => {
    const result = replay(
      function* (context) {
        const timer = context.df.createTimer(new Date(T1));
        const event = context.df.waitForExternalEvent('reply');
        yield context.df.Task.any([event, timer]);
        timer.cancel();
        yield context.df.waitForExternalEvent('next');
        return 'done';
      },
      [
        ...start,
        { type: 'taskScheduled', seq: 0, kind: 'timer', name: 'timer' },
        { type: 'orchestratorStarted', at: T1 },
        { type: 'eventRaised', name: 'reply' },
      ],
    );

    expect(result.outcome).toEqual({ status: 'running', pending: [] });
  });

  it('fails as non-deterministic when the work at a position differs from the history', () => {
    const result = replay(
      function* (context) {
        yield context.df.callActivity('now-an-activity');
        return 'unreachable';
      },
      [...start, { type: 'taskScheduled', seq: 0, kind: 'timer', name: 'timer' }],
    );

    expect(result.outcome).toMatchObject({
      status: 'failed',
      nonDeterministic: true,
      failure: { name: 'NonDeterministicOrchestrationError' },
    });
    expect(result.outcome.status === 'failed' && result.outcome.failure.message).toContain(
      "its step 0 is activity 'now-an-activity', but the history recorded a timer",
    );
  });

  it('fails on a yielded value that is not a task, and on an empty Task.all, as durable-functions does', () => {
    const notATask = replay(function* () {
      yield 42 as unknown as df.Task;
    }, start);
    const emptyFanOut = replay(function* (context) {
      yield context.df.Task.all([]);
    }, start);

    expect(notATask.outcome).toMatchObject({
      status: 'failed',
      failure: { message: expect.stringContaining('type number') },
    });
    expect(emptyFanOut.outcome).toMatchObject({
      status: 'failed',
      failure: { message: expect.stringContaining('you must specify at least one Task') },
    });
  });

  it('reports the custom status and rejects APIs the driver does not implement', () => {
    const result = replay(function* (context) {
      context.df.setCustomStatus({ step: 1 });
      context.df.continueAsNew(null);
      yield context.df.waitForExternalEvent('never');
    }, start);

    expect(result.customStatus).toEqual({ step: 1 });
    expect(result.outcome).toMatchObject({
      status: 'failed',
      failure: { message: expect.stringContaining('continueAsNew') },
    });
  });
});
