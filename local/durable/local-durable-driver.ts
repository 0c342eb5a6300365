// The local runtime's stand-in for the Durable Functions extension: it runs the same orchestrator
// generators and activity handlers the host registers with df.app.*, by replaying each instance's history.
// With a data file it keeps instances across restarts and resumes them by replay, as the task hub does.
import { randomUUID } from 'node:crypto';
import { resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import type { LogHandler, LogLevel } from '@azure/functions';
import type * as df from 'durable-functions';
import { ConflictError, NotFoundError, ValidationError, ensureError } from '../../shared/errors.js';
import type { AzureLatencyModel } from '../latency/azure-latency.js';
import {
  OrchestrationWaitTimeout,
  isFinishedStatus,
  type OrchestrationClient,
  type OrchestrationStatus,
} from '../../shared/durable/orchestration-client.js';
import { runActivity } from './activity-runner.js';
import { FileInstanceStore } from './file-instance-store.js';
import { describeFailure, toDurableJson, withoutRepeatedResults, type HistoryEvent } from './history.js';
import { InMemoryInstanceStore, type InstanceRecord, type InstanceStore } from './instance-store.js';
import { replayOrchestration, type PendingWork, type ReplayOutcome } from './replay.js';
import { noTaskHubEvents, type TaskHubEvents } from './task-hub-events.js';

export { InMemoryInstanceStore, type InstanceRecord } from './instance-store.js';
export { CorruptDataFileError } from '../persistence/data-file.js';
export type { TaskHubEvents } from './task-hub-events.js';

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
  /**
   * Dispatches episodes and activities, and reads and writes instances, as late as the task hub would
   * (undefined: at once).
   */
  latency?: AzureLatencyModel | undefined;
}

export interface LocalDurableDriverOpenOptions extends LocalDurableDriverOptions {
  /** The JSON file instances are kept in across restarts; undefined = memory only (or `store`). */
  dataFile?: string | undefined;
  /** Finished instances last updated longer ago than this are purged (default 24 h; Infinity keeps them). */
  retentionMs?: number;
  /** How often the purge runs besides at open (default 60 s). */
  purgeIntervalMs?: number;
  /** History appends are saved at most this long after they happen (default 100 ms); starts and events at once. */
  flushDelayMs?: number;
}

/** In-memory state of an instance's current execution; the durable part (history, inbox) lives in the store. */
interface Execution {
  executionId: string;
  episodeQueued: boolean;
  /** Set after a restart: the next episode replays even with no new message, to restart the pending work. */
  resuming: boolean;
  /** Sequence numbers already started in this process, so a replay never starts the same work twice. */
  started: Set<number>;
  timers: Map<number, NodeJS.Timeout>;
}

const DEFAULT_RETENTION_MS = 24 * 60 * 60_000;
const DEFAULT_PURGE_INTERVAL_MS = 60_000;

export class LocalDurableDriver implements OrchestrationClient {
  readonly #registry: DurableRegistry;
  readonly #store: InstanceStore;
  readonly #now: () => Date;
  readonly #timerResolutionMs: number;
  readonly #logHandler: LogHandler | undefined;
  readonly #latency: AzureLatencyModel | undefined;
  readonly #executions = new Map<string, Execution>();
  /** Per-instance queue: episodes, starts and terminations of one instance never interleave. */
  readonly #locks = new Map<string, Promise<void>>();
  readonly #completionWaiters = new Map<string, Set<(status: OrchestrationStatus) => void>>();
  readonly #retrySleeps = new Set<{ timer: NodeJS.Timeout; resolve: (completed: boolean) => void }>();
  #busy = 0;
  #idleWaiters: (() => void)[] = [];
  #closed = false;
  #purgeTimer: NodeJS.Timeout | undefined;
  readonly #events = noTaskHubEvents();

  /**
   * Loads the instances (from `dataFile`, or the given store), purges finished ones past the retention,
   * then resumes every Pending or Running instance by replay on a later turn of the event loop. A data
   * file that cannot be read rejects with CorruptDataFileError and is left untouched.
   */
  static async open(
    registry: DurableRegistry,
    options: LocalDurableDriverOpenOptions = {},
  ): Promise<LocalDurableDriver> {
    const { dataFile, retentionMs, purgeIntervalMs, flushDelayMs, ...driverOptions } = options;
    const retention = retentionMs ?? DEFAULT_RETENTION_MS;
    if (!(retention > 0)) throw new ValidationError('retentionMs must be a positive number of milliseconds.');
    let store = driverOptions.store;
    if (dataFile !== undefined) {
      if (store !== undefined) throw new ValidationError('Pass either dataFile or store, not both.');
      const file = resolve(dataFile);
      store = await FileInstanceStore.open(file, {
        ...(flushDelayMs === undefined ? {} : { flushDelayMs }),
        onSaveError: (error) =>
          writeLog(
            driverOptions.logHandler,
            'error',
            `Saving durable state to ${file} failed; retrying with the next change:`,
            error,
          ),
      });
    }
    const driver = new LocalDurableDriver(registry, { ...driverOptions, ...(store ? { store } : {}) });
    if (Number.isFinite(retention)) {
      await driver.#purgeFinished(retention);
      driver.#purgeTimer = setInterval(
        () => void driver.#purgeFinished(retention),
        purgeIntervalMs ?? DEFAULT_PURGE_INTERVAL_MS,
      );
      driver.#purgeTimer.unref();
    }
    await driver.#resumeAll();
    return driver;
  }

  constructor(registry: DurableRegistry, options: LocalDurableDriverOptions = {}) {
    this.#registry = registry;
    this.#store = options.store ?? new InMemoryInstanceStore();
    this.#now = options.now ?? (() => new Date());
    this.#timerResolutionMs = options.timerResolutionMs ?? 1000;
    this.#logHandler = options.logHandler;
    this.#latency = options.latency;
  }

  /** Resolves once the new instance is saved, as the host's client writes to storage before returning. */
  async startNew(name: string, options: { instanceId: string; input?: unknown }): Promise<string> {
    this.#assertOpen();
    if (typeof options.instanceId !== 'string' || options.instanceId === '') {
      throw new ValidationError('instanceId must be a non-empty string.');
    }
    // The client writes the instance's row before it queues its start.
    await this.#latency?.delay('task-hub.table');
    await this.#createInstance(name, options.instanceId, toDurableJson(options.input));
    await this.#store.flush();
    return options.instanceId;
  }

  async getStatus(instanceId: string): Promise<OrchestrationStatus | undefined> {
    await this.#latency?.delay('task-hub.table');
    const record = await this.#store.get(instanceId);
    return record === undefined ? undefined : toStatus(record);
  }

  /** Resolves once the event is saved with the instance. */
  async raiseEvent(instanceId: string, eventName: string, eventData?: unknown): Promise<void> {
    this.#assertOpen();
    if (!eventName) throw new ValidationError('eventName must be a non-empty string.');
    const record = await this.#requireRecord(instanceId);
    // Durable answers 410 Gone for a finished instance and drops the event; so does the driver.
    if (isFinishedStatus(record.runtimeStatus)) return;
    this.#events.eventsRaised += 1;
    await this.#deliver(instanceId, record.executionId, [
      { type: 'eventRaised', name: eventName, data: toDurableJson(eventData) },
    ]);
    await this.#store.flush();
  }

  async terminate(instanceId: string, reason: string): Promise<void> {
    await this.#exclusive(instanceId, async () => {
      const record = await this.#requireRecord(instanceId);
      if (isFinishedStatus(record.runtimeStatus)) return;
      record.runtimeStatus = 'Terminated';
      record.output = reason;
      record.inbox = [];
      record.lastUpdatedTime = this.#now().toISOString();
      await this.#store.put(record);
      // Activities already running finish, as in Durable; their results are dropped.
      this.#finish(record);
    });
    await this.#store.flush();
  }

  /** Forgets a finished instance, as the task hub's purge does; a Pending or Running one is refused. */
  async purge(instanceId: string): Promise<boolean> {
    this.#assertOpen();
    const purged = await this.#exclusive(instanceId, async () => {
      const record = await this.#store.get(instanceId);
      if (record === undefined) return false;
      if (!isFinishedStatus(record.runtimeStatus))
        throw new ConflictError(
          `Orchestration instance '${instanceId}' is ${record.runtimeStatus}: terminate it before purging it.`,
        );
      return this.#store.delete(instanceId);
    });
    await this.#store.flush();
    return purged;
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
        () => settle(() => reject(new OrchestrationWaitTimeout(instanceId, timeoutMs))),
        timeoutMs,
      );
      waiters.add(onFinished);
      // Registered before reading, so a finish in between is not missed.
      this.getStatus(instanceId).then(
        (status) => {
          if (status === undefined) settle(() => reject(notFound(instanceId)));
          else if (isFinishedStatus(status.runtimeStatus)) onFinished(status);
        },
        (error: unknown) => settle(() => reject(ensureError(error))),
      );
    });
  }

  /** What a task hub would have billed for since start or resetStats(), for benchmarks. */
  stats(): TaskHubEvents {
    return { ...this.#events };
  }

  resetStats(): void {
    Object.assign(this.#events, noTaskHubEvents());
  }

  /** Resolves when no instance is running an activity or an orchestrator step (pending timers do not count). */
  idle(): Promise<void> {
    if (this.#busy === 0) return Promise.resolve();
    return new Promise((resolve) => this.#idleWaiters.push(resolve));
  }

  /**
   * Stops accepting work and timers, cuts retry waits short, waits for running activities (their results
   * are kept for the next start), then saves everything.
   */
  async close(): Promise<void> {
    this.#closed = true;
    clearInterval(this.#purgeTimer);
    for (const execution of this.#executions.values()) clearTimers(execution);
    for (const sleep of this.#retrySleeps) {
      clearTimeout(sleep.timer);
      sleep.resolve(false);
    }
    this.#retrySleeps.clear();
    await this.idle();
    await this.#store.close();
  }

  async #purgeFinished(retentionMs: number): Promise<void> {
    try {
      await this.#store.purgeFinished(new Date(this.#now().getTime() - retentionMs));
    } catch (error) {
      this.#log('error', 'Purging finished durable instances failed:', error);
    }
  }

  /** Picks up every unfinished instance where its saved history left it. */
  async #resumeAll(): Promise<void> {
    for (const record of await this.#store.list()) {
      if (isFinishedStatus(record.runtimeStatus)) continue;
      const execution = newExecution(record.executionId);
      execution.resuming = true;
      this.#executions.set(record.instanceId, execution);
      this.#queueEpisode(record.instanceId, execution);
    }
  }

  async #createInstance(name: string, instanceId: string, input: unknown): Promise<void> {
    if (!this.#registry.orchestrations.has(name)) {
      throw new NotFoundError(`No orchestration named '${name}' is registered.`);
    }
    await this.#exclusive(instanceId, async () => {
      const existing = await this.#store.get(instanceId);
      // The extension's default (overridableExistingInstanceStates = NonRunningStates): only a finished
      // instance may be replaced.
      if (existing !== undefined && !isFinishedStatus(existing.runtimeStatus)) {
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
        inbox: [{ type: 'executionStarted' }],
      };
      await this.#store.put(record);
      this.#events.orchestrationStarts += 1;
      const previous = this.#executions.get(instanceId);
      if (previous !== undefined) clearTimers(previous);
      const execution = newExecution(record.executionId);
      this.#executions.set(instanceId, execution);
      this.#queueEpisode(instanceId, execution);
    });
  }

  /**
   * Adds events to the instance's saved inbox and queues an episode. Deliveries to a replaced or finished
   * execution are dropped. After close() the events are still saved, for the next start to replay.
   */
  #deliver(instanceId: string, executionId: string, events: HistoryEvent[]): Promise<void> {
    this.#busy++;
    return this.#exclusive(instanceId, async () => {
      const record = await this.#store.get(instanceId);
      if (
        record === undefined ||
        record.executionId !== executionId ||
        isFinishedStatus(record.runtimeStatus)
      ) {
        return;
      }
      record.inbox.push(...events);
      await this.#store.put(record);
      const execution = this.#executions.get(instanceId);
      if (execution?.executionId === executionId) this.#queueEpisode(instanceId, execution);
    }).finally(() => this.#release());
  }

  /** #deliver for internal messages (results, timers), whose failure has no caller to report to. */
  #post(instanceId: string, executionId: string, events: HistoryEvent[]): void {
    this.#deliver(instanceId, executionId, events).catch((error: unknown) =>
      this.#log('error', `Durable instance '${instanceId}' could not take a message:`, error),
    );
  }

  #queueEpisode(instanceId: string, execution: Execution): void {
    if (execution.episodeQueued || this.#closed) return;
    execution.episodeQueued = true;
    this.#busy++;
    // On a later turn of the event loop, as the host does: callers (startNew) return first, and
    // results arriving together are replayed in one episode. With the latency model, once the task hub has
    // dispatched the episode's messages; those arriving meanwhile join the same episode, as in a batch.
    const run = () => {
      this.#exclusive(instanceId, () => this.#runEpisode(instanceId, execution))
        .catch((error: unknown) =>
          this.#log('error', `Durable instance '${instanceId}' failed to advance:`, error),
        )
        .finally(() => this.#release());
    };
    if (this.#latency === undefined) setImmediate(run);
    else setTimeout(run, this.#latency.draw('task-hub.orchestration-dispatch'));
  }

  async #runEpisode(instanceId: string, execution: Execution): Promise<void> {
    execution.episodeQueued = false;
    if (this.#closed) return;
    const resuming = execution.resuming;
    execution.resuming = false;
    const record = await this.#store.get(instanceId);
    if (
      record === undefined ||
      record.executionId !== execution.executionId ||
      isFinishedStatus(record.runtimeStatus) ||
      (record.inbox.length === 0 && !resuming)
    ) {
      return;
    }
    const events = withoutRepeatedResults(record.history, record.inbox);
    this.#events.episodes += 1;
    this.#events.messages += record.inbox.length;
    record.inbox = [];
    const handler = this.#registry.orchestrations.get(record.name);
    const previousLength = record.history.length;
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
      this.#events.historyEvents += history.length - previousLength;
    } else {
      const result = replayOrchestration({
        handler,
        name: record.name,
        instanceId,
        input: record.input,
        history,
        invocationId: randomUUID(),
        ...(this.#logHandler ? { logHandler: this.#logHandler } : {}),
      });
      outcome = result.outcome;
      // A resume that brought nothing new leaves the history as it was.
      if (events.length > 0 || result.scheduled.length > 0) {
        record.history = [...history, ...result.scheduled];
        this.#events.historyEvents += record.history.length - previousLength;
      }
      try {
        record.customStatus = toDurableJson(result.customStatus) ?? null;
        if (outcome.status === 'completed')
          outcome = { ...outcome, output: toDurableJson(outcome.output) ?? null };
      } catch (error) {
        outcome = failedWith(error);
      }
    }
    record.lastUpdatedTime = now.toISOString();
    // The history and the instance's row are written to the task hub's tables before the new work is sent.
    await this.#latency?.delay('task-hub.table');
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
          this.#events.timers += 1;
          this.#armTimer(record.instanceId, execution, work.seq, work.fireAt);
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
    this.#events.activities += 1;
    const latency = this.#latency;
    const ran =
      latency === undefined
        ? this.#runStartedActivity(instanceId, execution, work)
        : latency.delay('task-hub.activity-dispatch').then(() =>
            // Closed while the message was on its way: it is still in the history, and the next start runs it.
            this.#closed ? undefined : this.#runStartedActivity(instanceId, execution, work),
          );
    ran
      .catch((error: unknown) => this.#log('error', `Activity '${work.name}' could not be run:`, error))
      .finally(() => this.#release());
  }

  #runStartedActivity(
    instanceId: string,
    execution: Execution,
    work: Extract<PendingWork, { kind: 'activity' }>,
  ): Promise<void> {
    return runActivity({
      name: work.name,
      handler: this.#registry.activities.get(work.name),
      input: work.input,
      ...(work.retry ? { retry: work.retry } : {}),
      ...(this.#logHandler ? { logHandler: this.#logHandler } : {}),
      sleep: (ms) => this.#sleep(ms),
      clock: () => performance.now(),
    }).then((outcome) => {
      const event: HistoryEvent = outcome.succeeded
        ? { type: 'taskCompleted', seq: work.seq, result: outcome.result }
        : { type: 'taskFailed', seq: work.seq, failure: outcome.failure };
      this.#events.activityResults += 1;
      return this.#deliver(instanceId, execution.executionId, [event]);
    });
  }

  #armTimer(instanceId: string, execution: Execution, seq: number, fireAt: Date): void {
    const check = () => {
      execution.timers.delete(seq);
      const remaining = fireAt.getTime() - this.#now().getTime();
      if (remaining <= 0) {
        this.#events.timersFired += 1;
        this.#post(instanceId, execution.executionId, [{ type: 'timerFired', seq }]);
        return;
      }
      // Short hops re-read the clock (a test clock can jump) and stay within setTimeout's range.
      execution.timers.set(seq, setTimeout(check, Math.min(remaining, this.#timerResolutionMs)));
    };
    check();
  }

  /** Stops the finished execution's timers and wakes the waiters. */
  #finish(record: InstanceRecord): void {
    this.#events.completions += 1;
    const execution = this.#executions.get(record.instanceId);
    if (execution !== undefined && execution.executionId === record.executionId) {
      clearTimers(execution);
      this.#executions.delete(record.instanceId);
    }
    const status = toStatus(record);
    for (const waiter of [...(this.#completionWaiters.get(record.instanceId) ?? [])]) waiter(status);
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
    writeLog(this.#logHandler, level, ...args);
  }
}

function writeLog(logHandler: LogHandler | undefined, level: LogLevel, ...args: unknown[]): void {
  if (logHandler) logHandler(level, ...args);
  else console.error(...args);
}

function newExecution(executionId: string): Execution {
  return { executionId, episodeQueued: false, resuming: false, started: new Set(), timers: new Map() };
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
