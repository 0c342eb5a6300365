// Replays an orchestrator generator over its history, as the Durable Functions executor does: the
// generator runs from the start on every episode, recorded results are fed back in history order, and
// it stops at the first task with no result yet. No I/O: the driver acts on what this returns.
import functions, { type LogHandler } from '@azure/functions';
import * as df from 'durable-functions';
import type { FailureInfo, HistoryEvent, ScheduledKind, TaskScheduledEvent } from './history.js';
import { describeFailure } from './history.js';
import { LocalDurableOrchestrationContext } from './orchestration-context.js';
import type { RetryPolicy } from './retry-policy.js';
import { LocalTask, LocalTimerTask, atomicLeaves, type AtomicTask } from './tasks.js';

export interface ReplayRequest {
  handler: df.OrchestrationHandler;
  name: string;
  instanceId: string;
  input: unknown;
  history: readonly HistoryEvent[];
  /** A fresh id per episode, as the host gives each orchestrator invocation. */
  invocationId: string;
  logHandler?: LogHandler;
}

/** Work the orchestrator waits on that has no result yet; the driver starts what is not already running. */
export type PendingWork =
  | { kind: 'activity'; seq: number; name: string; input: unknown; retry?: RetryPolicy }
  | { kind: 'timer'; seq: number; fireAt: Date };

export type ReplayOutcome =
  | { status: 'running'; pending: PendingWork[] }
  | { status: 'completed'; output: unknown }
  | { status: 'failed'; failure: FailureInfo; nonDeterministic: boolean };

export interface ReplayResult {
  outcome: ReplayOutcome;
  /** Newly scheduled work, to append to the history. */
  scheduled: TaskScheduledEvent[];
  customStatus: unknown;
}

export function replayOrchestration(request: ReplayRequest): ReplayResult {
  return new ReplayExecutor(request).run();
}

type ResultEvent = Extract<HistoryEvent, { type: 'taskCompleted' | 'taskFailed' | 'timerFired' }>;

/** durable-functions' TaskFailedError also takes the task's name and id, though its typings omit them. */
const TaskFailedError = df.TaskFailedError as unknown as new (
  details: df.FailureDetails,
  taskName?: string,
  taskId?: number,
) => df.TaskFailedError;

class ReplayExecutor {
  readonly #request: ReplayRequest;
  readonly #df: LocalDurableOrchestrationContext;
  readonly #context: df.OrchestrationContext;
  readonly #recorded = new Map<number, TaskScheduledEvent>();
  readonly #scheduled: TaskScheduledEvent[] = [];
  readonly #open = new Map<number, AtomicTask>();
  /** Results whose task the generator has not yielded yet in this replay. */
  readonly #deferred = new Map<number, ResultEvent>();
  readonly #eventWaiters = new Map<string, AtomicTask[]>();
  /** Events raised before anyone waited for them, kept in arrival order as Durable does. */
  readonly #bufferedEvents = new Map<string, unknown[]>();
  #generator: Generator<df.Task, unknown, unknown> | undefined;
  #current: LocalTask | undefined;
  #outcome: ReplayOutcome | undefined;
  #nextSeq = 0;
  #replaying = false;

  constructor(request: ReplayRequest) {
    this.#request = request;
    this.#df = new LocalDurableOrchestrationContext(request.instanceId, request.input);
    const invocation = new functions.InvocationContext({
      invocationId: request.invocationId,
      functionName: request.name,
      ...(request.logHandler ? { logHandler: request.logHandler } : {}),
      options: { trigger: { type: 'orchestrationTrigger', name: 'context' } },
    });
    this.#context = Object.assign(invocation, { df: this.#df });
    for (const event of request.history)
      if (event.type === 'taskScheduled') this.#recorded.set(event.seq, event);
  }

  run(): ReplayResult {
    const { history } = this.#request;
    const lastEpisodeStart = history.findLastIndex((e) => e.type === 'orchestratorStarted');
    for (let i = 0; i < history.length && this.#outcome === undefined; i++) {
      this.#replaying = i < lastEpisodeStart;
      this.#apply(history[i]!);
    }
    const outcome = this.#outcome ?? { status: 'running', pending: this.#pendingWork() };
    return { outcome, scheduled: this.#scheduled, customStatus: this.#df.customStatus };
  }

  #apply(event: HistoryEvent): void {
    switch (event.type) {
      case 'orchestratorStarted': {
        const at = new Date(event.at);
        if (at > this.#df.currentUtcDateTime) this.#df.currentUtcDateTime = at;
        return;
      }
      case 'taskScheduled':
        return;
      case 'executionStarted':
        this.#start();
        return;
      case 'taskCompleted':
      case 'taskFailed':
      case 'timerFired':
        this.#settleRecorded(event);
        break;
      case 'eventRaised':
        this.#deliverEvent(event.name, event.data);
        break;
    }
    this.#resume();
  }

  #start(): void {
    let generator: unknown;
    try {
      generator = this.#request.handler(this.#context);
    } catch (error) {
      this.#fail(error);
      return;
    }
    if (!isGenerator(generator)) {
      this.#fail(
        new Error(`Orchestration '${this.#request.name}' must be a generator function (function*).`),
      );
      return;
    }
    this.#generator = generator;
    this.#advance(true, undefined);
    this.#resume();
  }

  /** Feeds results to the generator for as long as the task it waits on has one. */
  #resume(): void {
    while (this.#outcome === undefined && this.#current?.hasResult) {
      this.#advance(this.#current.isCompleted, this.#current.result);
    }
  }

  #advance(succeeded: boolean, value: unknown): void {
    const generator = this.#generator;
    if (generator === undefined) return;
    this.#df.isReplaying = this.#replaying;
    let step: IteratorResult<df.Task, unknown>;
    try {
      step = succeeded ? generator.next(value) : generator.throw(value);
    } catch (error) {
      this.#fail(error);
      return;
    }
    if (step.done) {
      this.#outcome = { status: 'completed', output: step.value };
      return;
    }
    const task: unknown = step.value;
    if (!(task instanceof LocalTask)) {
      this.#fail(
        new Error(
          `Orchestration '${this.#request.name}' yielded data of type ${typeof task}. Only tasks created by ` +
            'context.df (callActivity, createTimer, Task.all, ...) can be yielded.',
        ),
      );
      return;
    }
    this.#track(task);
    this.#current = task;
  }

  /** Numbers newly yielded work in yield order and checks it against what the history recorded. */
  #track(task: LocalTask): void {
    for (const leaf of atomicLeaves(task)) {
      if (leaf.tracked) continue;
      leaf.tracked = true;
      const { action } = leaf;
      if (action.kind === 'event') {
        this.#trackEventWait(leaf, action.name);
        continue;
      }
      const seq = this.#nextSeq++;
      leaf.seq = seq;
      const name = action.kind === 'timer' ? 'timer' : action.name;
      const recorded = this.#recorded.get(seq);
      if (recorded === undefined) {
        this.#scheduled.push({ type: 'taskScheduled', seq, kind: action.kind, name });
      } else if (recorded.kind !== action.kind || recorded.name !== name) {
        this.#failNonDeterministic(seq, action.kind, name, recorded);
        return;
      }
      this.#open.set(seq, leaf);
      const deferred = this.#deferred.get(seq);
      if (deferred !== undefined) {
        this.#deferred.delete(seq);
        this.#settleRecorded(deferred);
      }
    }
  }

  #trackEventWait(task: AtomicTask, name: string): void {
    const buffered = this.#bufferedEvents.get(name);
    if (buffered !== undefined && buffered.length > 0) {
      task.settle(true, buffered.shift());
      return;
    }
    const waiters = this.#eventWaiters.get(name) ?? [];
    waiters.push(task);
    this.#eventWaiters.set(name, waiters);
  }

  #settleRecorded(event: ResultEvent): void {
    const task = this.#open.get(event.seq);
    if (task === undefined) {
      this.#deferred.set(event.seq, event);
      return;
    }
    this.#open.delete(event.seq);
    if (event.type === 'taskFailed') {
      const name = task.action.kind === 'timer' ? 'timer' : task.action.name;
      task.settle(false, toTaskFailedError(event.failure, name, event.seq));
    } else {
      task.settle(true, event.type === 'taskCompleted' ? event.result : undefined);
    }
  }

  #deliverEvent(name: string, data: unknown): void {
    const waiter = this.#eventWaiters.get(name)?.shift();
    if (waiter !== undefined) {
      waiter.settle(true, data);
      return;
    }
    const buffered = this.#bufferedEvents.get(name) ?? [];
    buffered.push(data);
    this.#bufferedEvents.set(name, buffered);
  }

  #pendingWork(): PendingWork[] {
    const pending: PendingWork[] = [];
    for (const [seq, task] of this.#open) {
      const { action } = task;
      switch (action.kind) {
        case 'activity':
          pending.push({
            kind: 'activity',
            seq,
            name: action.name,
            input: action.input,
            ...(action.retry ? { retry: action.retry } : {}),
          });
          break;
        case 'timer':
          // A cancelled timer is not waited on: the driver drops it.
          if (!(task instanceof LocalTimerTask && task.isCanceled))
            pending.push({ kind: 'timer', seq, fireAt: action.fireAt });
          break;
        case 'event':
          break;
      }
    }
    return pending;
  }

  #fail(error: unknown): void {
    this.#outcome = { status: 'failed', failure: describeFailure(error), nonDeterministic: false };
  }

  #failNonDeterministic(seq: number, kind: ScheduledKind, name: string, recorded: TaskScheduledEvent): void {
    const message =
      `Non-deterministic orchestrator '${this.#request.name}' (instance '${this.#request.instanceId}'): on replay ` +
      `its step ${seq} is ${describe(kind, name)}, but the history recorded ${describe(recorded.kind, recorded.name)}. ` +
      'An orchestrator must make the same calls in the same order on every replay: take the time from ' +
      'context.df.currentUtcDateTime, pass ids in the input or activity results, and leave I/O to activities ' +
      '(no Date.now, Math.random or I/O in orchestrator code).';
    this.#outcome = {
      status: 'failed',
      failure: { name: 'NonDeterministicOrchestrationError', message },
      nonDeterministic: true,
    };
  }
}

function describe(kind: ScheduledKind, name: string): string {
  return kind === 'timer' ? 'a timer' : `activity '${name}'`;
}

function isGenerator(value: unknown): value is Generator<df.Task, unknown, unknown> {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as Partial<Generator>).next === 'function' &&
    typeof (value as Partial<Generator>).throw === 'function'
  );
}

/** What durable-functions throws into the generator when a task fails, so `instanceof df.TaskFailedError` holds. */
function toTaskFailedError(failure: FailureInfo, taskName: string, seq: number): df.TaskFailedError {
  const details: df.FailureDetails = {
    errorType: failure.name,
    errorMessage: failure.message,
    ...(failure.stack === undefined ? {} : { stackTrace: failure.stack }),
    isNonRetriable: false,
    isCausedBy: (errorType) => errorType === failure.name,
  };
  return new TaskFailedError(details, taskName, seq);
}
