// The local runtime's stand-in for the Durable Functions extension: it runs the same orchestrator
// generators and activity handlers the host registers with df.app.*, by replaying each instance's history.
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import type { LogHandler, LogLevel } from '@azure/functions';
import type * as df from 'durable-functions';
import { ConflictError, NotFoundError, ValidationError, ensureError } from '../../shared/errors.js';
import type {
  OrchestrationClient,
  OrchestrationRuntimeStatus,
  OrchestrationStatus,
} from '../../shared/durable/orchestration-client.js';
import { runActivity } from './activity-runner.js';
import { describeFailure, toDurableJson, type FailureInfo, type HistoryEvent } from './history.js';
import { InMemoryInstanceStore, type InstanceRecord, type InstanceStore } from './instance-store.js';
import { replayOrchestration, type PendingWork, type ReplayOutcome } from './replay.js';

export { InMemoryInstanceStore, type InstanceRecord, type InstanceStore } from './instance-store.js';
export type { HistoryEvent } from './history.js';

export interface DurableRegistry {
  orchestrations: ReadonlyMap<string, df.OrchestrationHandler>;
  activities: ReadonlyMap<string, df.ActivityHandler>;
}

export interface LocalDurableDriverOptions {
  store?: InstanceStore;
  /** The clock behind `currentUtcDateTime`, timers and status times. */
  now?: () => Date;
  /** Longest a durable timer sleeps before reading `now` again, so a test clock can move timers along. */
  timerResolutionMs?: number;
  /** Receives the logs of orchestrators, activities and the driver (the host's console format by default). */
  logHandler?: LogHandler;
}

/** In-memory state of an instance's current execution; the durable part lives in the store. */
interface Execution {
  executionId: string;
  /** New events (results, raised events) waiting for the next episode. */
  inbox: HistoryEvent[];
  episodeQueued: boolean;
  /** Sequence numbers already started in this process, so a replay never starts the same work twice. */
  started: Set<number>;
  timers: Map<number, NodeJS.Timeout>;
}

const TERMINAL: readonly OrchestrationRuntimeStatus[] = ['Completed', 'Failed', 'Terminated'];

export class LocalDurableDriver implements OrchestrationClient {
  readonly #registry: DurableRegistry;
  readonly #store: InstanceStore;
  readonly #now: () => Date;
  readonly #timerResolutionMs: number;
  readonly #logHandler: LogHandler | undefined;
  readonly #executions = new Map<string, Execution>();
  /** Per-instance queue: episodes, starts and terminations of one instance never interleave. */
  readonly #locks = new Map<string, Promise<void>>();
  readonly #completionWaiters = new Map<string, Set<(status: OrchestrationStatus) => void>>();
  readonly #retrySleeps = new Set<{ timer: NodeJS.Timeout; resolve: (completed: boolean) => void }>();
  #busy = 0;
  #idleWaiters: (() => void)[] = [];
  #closed = false;

  constructor(registry: DurableRegistry, options: LocalDurableDriverOptions = {}) {
    this.#registry = registry;
    this.#store = options.store ?? new InMemoryInstanceStore();
    this.#now = options.now ?? (() => new Date());
    this.#timerResolutionMs = options.timerResolutionMs ?? 1000;
    this.#logHandler = options.logHandler;
  }

  async startNew(name: string, options: { instanceId: string; input?: unknown }): Promise<string> {
    this.#assertOpen();
    if (typeof options.instanceId !== 'string' || options.instanceId === '') {
      throw new ValidationError('instanceId must be a non-empty string.');
    }
    await this.#createInstance(name, options.instanceId, toDurableJson(options.input));
    return options.instanceId;
  }

  async getStatus(instanceId: string): Promise<OrchestrationStatus | undefined> {
    const record = await this.#store.get(instanceId);
    return record === undefined ? undefined : toStatus(record);
  }

  async raiseEvent(instanceId: string, eventName: string, eventData?: unknown): Promise<void> {
    this.#assertOpen();
    if (!eventName) throw new ValidationError('eventName must be a non-empty string.');
    const record = await this.#requireRecord(instanceId);
    // Durable answers 410 Gone for a finished instance and drops the event; so does the driver.
    if (isTerminal(record.runtimeStatus)) return;
    this.#deliver(instanceId, record.executionId, [
      { type: 'eventRaised', name: eventName, data: toDurableJson(eventData) },
    ]);
  }

  async terminate(instanceId: string, reason: string): Promise<void> {
    await this.#exclusive(instanceId, async () => {
      const record = await this.#requireRecord(instanceId);
      if (isTerminal(record.runtimeStatus)) return;
      record.runtimeStatus = 'Terminated';
      record.output = reason;
      record.lastUpdatedTime = this.#now().toISOString();
      await this.#store.put(record);
      // Activities already running finish, as in Durable; their results are dropped.
      this.#finish(record);
    });
  }

  /** Resolves with the status once the instance is Completed, Failed or Terminated; rejects after `timeoutMs`. */
  waitForCompletion(instanceId: string, timeoutMs: number): Promise<OrchestrationStatus> {
    return new Promise((resolve, reject) => {
      const waiters = this.#completionWaiters.get(instanceId) ?? new Set();
      this.#completionWaiters.set(instanceId, waiters);
      const settle = (action: () => void) => {
        clearTimeout(timer);
        waiters.delete(onFinished);
        if (waiters.size === 0 && this.#completionWaiters.get(instanceId) === waiters) {
          this.#completionWaiters.delete(instanceId);
        }
        action();
      };
      const onFinished = (status: OrchestrationStatus) => settle(() => resolve(status));
      const timer = setTimeout(
        () =>
          settle(() =>
            reject(new Error(`Orchestration '${instanceId}' did not finish within ${timeoutMs} ms.`)),
          ),
        timeoutMs,
      );
      waiters.add(onFinished);
      // Registered before reading, so a finish in between is not missed.
      this.getStatus(instanceId).then(
        (status) => {
          if (status === undefined) settle(() => reject(notFound(instanceId)));
          else if (isTerminal(status.runtimeStatus)) onFinished(status);
        },
        (error: unknown) => settle(() => reject(ensureError(error))),
      );
    });
  }

  /** Resolves when no instance is running an activity or an orchestrator step (pending timers do not count). */
  idle(): Promise<void> {
    if (this.#busy === 0) return Promise.resolve();
    return new Promise((resolve) => this.#idleWaiters.push(resolve));
  }

  /** Stops accepting work and timers, cuts retry waits short, and waits for running activities. */
  async close(): Promise<void> {
    this.#closed = true;
    for (const execution of this.#executions.values()) clearTimers(execution);
    for (const sleep of this.#retrySleeps) {
      clearTimeout(sleep.timer);
      sleep.resolve(false);
    }
    this.#retrySleeps.clear();
    await this.idle();
  }

  async #createInstance(
    name: string,
    instanceId: string,
    input: unknown,
    parent?: InstanceRecord['parent'],
  ): Promise<void> {
    if (!this.#registry.orchestrations.has(name)) {
      throw new NotFoundError(`No orchestration named '${name}' is registered.`);
    }
    await this.#exclusive(instanceId, async () => {
      const existing = await this.#store.get(instanceId);
      // The extension's default (overridableExistingInstanceStates = NonRunningStates): only a finished
      // instance may be replaced.
      if (existing !== undefined && !isTerminal(existing.runtimeStatus)) {
        throw new ConflictError(
          `Orchestration instance '${instanceId}' is already ${existing.runtimeStatus}; ` +
            'an instance id can be reused only once its instance has finished.',
        );
      }
      const now = this.#now().toISOString();
      const record: InstanceRecord = {
        instanceId,
        executionId: randomUUID(),
        name,
        input,
        runtimeStatus: 'Pending',
        output: null,
        customStatus: null,
        createdTime: now,
        lastUpdatedTime: now,
        history: [],
        ...(parent ? { parent } : {}),
      };
      await this.#store.put(record);
      const previous = this.#executions.get(instanceId);
      if (previous !== undefined) clearTimers(previous);
      this.#executions.set(instanceId, {
        executionId: record.executionId,
        inbox: [],
        episodeQueued: false,
        started: new Set(),
        timers: new Map(),
      });
      this.#deliver(instanceId, record.executionId, [{ type: 'executionStarted' }]);
    });
  }

  /** Queues events for the execution; stale deliveries (replaced or finished instance) are dropped. */
  #deliver(instanceId: string, executionId: string, events: HistoryEvent[]): void {
    const execution = this.#executions.get(instanceId);
    if (execution === undefined || execution.executionId !== executionId) return;
    execution.inbox.push(...events);
    if (execution.episodeQueued || this.#closed) return;
    execution.episodeQueued = true;
    this.#busy++;
    // On a later turn of the event loop, as the host does: callers (startNew) return first, and
    // results arriving together are replayed in one episode.
    setImmediate(() => {
      this.#exclusive(instanceId, () => this.#runEpisode(instanceId, execution))
        .catch((error: unknown) =>
          this.#log('error', `Durable instance '${instanceId}' failed to advance:`, error),
        )
        .finally(() => this.#release());
    });
  }

  async #runEpisode(instanceId: string, execution: Execution): Promise<void> {
    execution.episodeQueued = false;
    const events = execution.inbox.splice(0);
    if (events.length === 0 || this.#closed) return;
    const record = await this.#store.get(instanceId);
    if (
      record === undefined ||
      record.executionId !== execution.executionId ||
      isTerminal(record.runtimeStatus)
    ) {
      return;
    }
    const handler = this.#registry.orchestrations.get(record.name);
    const now = this.#now();
    const history: HistoryEvent[] = [
      ...record.history,
      { type: 'orchestratorStarted', at: now.toISOString() },
      ...events,
    ];
    let outcome: ReplayOutcome;
    if (handler === undefined) {
      outcome = failedWith(new Error(`No orchestration named '${record.name}' is registered.`));
      record.history = history;
    } else {
      const result = replayOrchestration({
        handler,
        name: record.name,
        instanceId,
        input: record.input,
        ...(record.parent ? { parentInstanceId: record.parent.instanceId } : {}),
        history,
        invocationId: randomUUID(),
        ...(this.#logHandler ? { logHandler: this.#logHandler } : {}),
      });
      outcome = result.outcome;
      record.history = [...history, ...result.scheduled];
      try {
        record.customStatus = toDurableJson(result.customStatus) ?? null;
        if (outcome.status === 'completed')
          outcome = { ...outcome, output: toDurableJson(outcome.output) ?? null };
      } catch (error) {
        outcome = failedWith(error);
      }
    }
    record.lastUpdatedTime = now.toISOString();
    switch (outcome.status) {
      case 'running':
        record.runtimeStatus = 'Running';
        break;
      case 'completed':
        record.runtimeStatus = 'Completed';
        record.output = outcome.output;
        break;
      case 'failed':
        record.runtimeStatus = 'Failed';
        record.failure = outcome.failure;
        // The extension reports a failed instance's output in this form.
        record.output = `Orchestrator function '${record.name}' failed: ${outcome.failure.message}`;
        break;
    }
    await this.#store.put(record);
    if (outcome.status === 'running') this.#dispatch(record, execution, outcome.pending);
    else this.#finish(record);
  }

  #dispatch(record: InstanceRecord, execution: Execution, pending: readonly PendingWork[]): void {
    const waitedOn = new Set(pending.map((work) => work.seq));
    // Timers the orchestrator cancelled (or no longer waits on) stop here.
    for (const [seq, timer] of execution.timers) {
      if (!waitedOn.has(seq)) {
        clearTimeout(timer);
        execution.timers.delete(seq);
      }
    }
    if (this.#closed) return;
    for (const work of pending) {
      if (execution.started.has(work.seq)) continue;
      execution.started.add(work.seq);
      switch (work.kind) {
        case 'activity':
          this.#startActivity(record.instanceId, execution, work);
          break;
        case 'timer':
          this.#armTimer(record.instanceId, execution, work.seq, work.fireAt);
          break;
        case 'subOrchestration':
          this.#startSubOrchestration(record.instanceId, execution, work);
          break;
      }
    }
  }

  #startActivity(
    instanceId: string,
    execution: Execution,
    work: Extract<PendingWork, { kind: 'activity' }>,
  ): void {
    this.#busy++;
    runActivity({
      name: work.name,
      handler: this.#registry.activities.get(work.name),
      input: work.input,
      ...(work.retry ? { retry: work.retry } : {}),
      ...(this.#logHandler ? { logHandler: this.#logHandler } : {}),
      sleep: (ms) => this.#sleep(ms),
      clock: () => performance.now(),
    })
      .then((outcome) => {
        const event: HistoryEvent = outcome.succeeded
          ? { type: 'taskCompleted', seq: work.seq, result: outcome.result }
          : { type: 'taskFailed', seq: work.seq, failure: outcome.failure };
        this.#deliver(instanceId, execution.executionId, [event]);
      })
      .catch((error: unknown) => this.#log('error', `Activity '${work.name}' could not be run:`, error))
      .finally(() => this.#release());
  }

  #armTimer(instanceId: string, execution: Execution, seq: number, fireAt: Date): void {
    const check = () => {
      execution.timers.delete(seq);
      const remaining = fireAt.getTime() - this.#now().getTime();
      if (remaining <= 0) {
        this.#deliver(instanceId, execution.executionId, [{ type: 'timerFired', seq }]);
        return;
      }
      // Short hops re-read the clock (a test clock can jump) and stay within setTimeout's range.
      execution.timers.set(seq, setTimeout(check, Math.min(remaining, this.#timerResolutionMs)));
    };
    check();
  }

  #startSubOrchestration(
    parentId: string,
    execution: Execution,
    work: Extract<PendingWork, { kind: 'subOrchestration' }>,
  ): void {
    this.#busy++;
    const parent = { instanceId: parentId, executionId: execution.executionId, seq: work.seq };
    this.#createInstance(work.name, work.instanceId, toDurableJson(work.input), parent)
      .catch((error: unknown) => {
        this.#deliver(parentId, execution.executionId, [
          { type: 'taskFailed', seq: work.seq, failure: describeFailure(error) },
        ]);
      })
      .finally(() => this.#release());
  }

  /** Stops the finished execution's timers, wakes waiters, and reports to a parent orchestration. */
  #finish(record: InstanceRecord): void {
    const execution = this.#executions.get(record.instanceId);
    if (execution !== undefined && execution.executionId === record.executionId) {
      clearTimers(execution);
      this.#executions.delete(record.instanceId);
    }
    const status = toStatus(record);
    for (const waiter of [...(this.#completionWaiters.get(record.instanceId) ?? [])]) waiter(status);
    if (record.parent !== undefined) {
      const { instanceId, executionId, seq } = record.parent;
      this.#deliver(instanceId, executionId, [childResult(record, seq)]);
    }
  }

  #sleep(ms: number): Promise<boolean> {
    if (this.#closed) return Promise.resolve(false);
    return new Promise((resolve) => {
      const entry = {
        timer: setTimeout(() => {
          this.#retrySleeps.delete(entry);
          resolve(true);
        }, ms),
        resolve,
      };
      this.#retrySleeps.add(entry);
    });
  }

  #exclusive<T>(instanceId: string, work: () => Promise<T>): Promise<T> {
    const previous = this.#locks.get(instanceId) ?? Promise.resolve();
    const result = previous.then(work);
    const done = result.then(
      () => undefined,
      () => undefined,
    );
    this.#locks.set(instanceId, done);
    void done.then(() => {
      if (this.#locks.get(instanceId) === done) this.#locks.delete(instanceId);
    });
    return result;
  }

  #release(): void {
    this.#busy--;
    if (this.#busy === 0) for (const resolve of this.#idleWaiters.splice(0)) resolve();
  }

  async #requireRecord(instanceId: string): Promise<InstanceRecord> {
    const record = await this.#store.get(instanceId);
    if (record === undefined) throw notFound(instanceId);
    return record;
  }

  #assertOpen(): void {
    if (this.#closed) throw new Error('The local durable driver is closed.');
  }

  #log(level: LogLevel, ...args: unknown[]): void {
    if (this.#logHandler) this.#logHandler(level, ...args);
    else console.error(...args);
  }
}

function isTerminal(status: OrchestrationRuntimeStatus): boolean {
  return TERMINAL.includes(status);
}

function clearTimers(execution: Execution): void {
  for (const timer of execution.timers.values()) clearTimeout(timer);
  execution.timers.clear();
}

function failedWith(error: unknown): ReplayOutcome {
  return { status: 'failed', failure: describeFailure(error), nonDeterministic: false };
}

function notFound(instanceId: string): NotFoundError {
  return new NotFoundError(`No orchestration instance with id '${instanceId}'.`);
}

function childResult(child: InstanceRecord, seq: number): HistoryEvent {
  if (child.runtimeStatus === 'Completed') return { type: 'taskCompleted', seq, result: child.output };
  const failure: FailureInfo =
    child.runtimeStatus === 'Failed' && child.failure !== undefined
      ? child.failure
      : {
          name: 'Error',
          message: `Sub-orchestration '${child.instanceId}' was terminated: ${String(child.output)}`,
        };
  return { type: 'taskFailed', seq, failure };
}

function toStatus(record: InstanceRecord): OrchestrationStatus {
  return {
    instanceId: record.instanceId,
    name: record.name,
    runtimeStatus: record.runtimeStatus,
    input: record.input ?? null,
    output: record.output ?? null,
    customStatus: record.customStatus ?? null,
    createdTime: new Date(record.createdTime),
    lastUpdatedTime: new Date(record.lastUpdatedTime),
  };
}
