// The local runtime's stand-in for the Durable Functions extension: it runs the same orchestrator
// generators and activity handlers the host registers with df.app.*, by replaying each instance's history.
// With a data file it keeps instances across restarts and resumes them by replay, as the task hub does.
import { randomUUID } from 'node:crypto';
import { resolve } from 'node:path';
import type { LogHandler, LogLevel } from '@azure/functions';
import type { AzureLatencyModel } from '../latency/azure-latency.js';
import { ConflictError, NotFoundError, ValidationError } from '../../shared/errors.js';
import {
  isFinishedStatus,
  type OrchestrationClient,
  type OrchestrationStatus,
} from '../../shared/durable/orchestration-client.js';
import { CompletionWaiters } from './completion-waiters.js';
import type {
  DurableRegistry,
  LocalDurableDriverOpenOptions,
  LocalDurableDriverOptions,
} from './driver-options.js';
import { recordOutcome, replayEpisode } from './episode.js';
import { FileInstanceStore } from './file-instance-store.js';
import { toDurableJson, withoutRepeatedResults, type HistoryEvent } from './history.js';
import { InMemoryInstanceStore, type InstanceRecord, type InstanceStore } from './instance-store.js';
import { notFound, toStatus } from './instance-status.js';
import { InstanceWork } from './instance-work.js';
import { noTaskHubEvents, type TaskHubEvents } from './task-hub-events.js';
import { clearTimers, newExecution, WorkDispatch, type Execution } from './work-dispatch.js';

export { InMemoryInstanceStore, type InstanceRecord } from './instance-store.js';
export { CorruptDataFileError } from '../persistence/data-file.js';
export type { TaskHubEvents } from './task-hub-events.js';
export type {
  DurableRegistry,
  LocalDurableDriverOpenOptions,
  LocalDurableDriverOptions,
} from './driver-options.js';

const DEFAULT_RETENTION_MS = 24 * 60 * 60_000;
const DEFAULT_PURGE_INTERVAL_MS = 60_000;

export class LocalDurableDriver implements OrchestrationClient {
  readonly #registry: DurableRegistry;
  readonly #store: InstanceStore;
  readonly #now: () => Date;
  readonly #logHandler: LogHandler | undefined;
  readonly #latency: AzureLatencyModel | undefined;
  readonly #executions = new Map<string, Execution>();
  readonly #work = new InstanceWork();
  readonly #dispatch: WorkDispatch;
  readonly #completionWaiters = new CompletionWaiters();
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
    this.#logHandler = options.logHandler;
    this.#latency = options.latency;
    this.#dispatch = new WorkDispatch({
      activities: registry.activities,
      now: this.#now,
      timerResolutionMs: options.timerResolutionMs ?? 1000,
      logHandler: this.#logHandler,
      latency: this.#latency,
      work: this.#work,
      counts: this.#events,
      closed: () => this.#closed,
      deliver: (instanceId, executionId, events) => this.#deliver(instanceId, executionId, events),
      post: (instanceId, executionId, events) => this.#post(instanceId, executionId, events),
      log: (level, ...args) => this.#log(level, ...args),
    });
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
    await this.#work.exclusive(instanceId, async () => {
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
    const purged = await this.#work.exclusive(instanceId, async () => {
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
    return this.#completionWaiters.wait(
      instanceId,
      timeoutMs,
      () => this.getStatus(instanceId),
      () => notFound(instanceId),
    );
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
    return this.#work.idle();
  }

  /**
   * Stops accepting work and timers, cuts retry waits short, waits for running activities (their results
   * are kept for the next start), then saves everything.
   */
  async close(): Promise<void> {
    this.#closed = true;
    clearInterval(this.#purgeTimer);
    for (const execution of this.#executions.values()) clearTimers(execution);
    this.#dispatch.cutSleepsShort();
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
    await this.#work.exclusive(instanceId, async () => {
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
    this.#work.begin();
    return this.#work
      .exclusive(instanceId, async () => {
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
      })
      .finally(() => this.#work.release());
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
    this.#work.begin();
    // On a later turn of the event loop, as the host does: callers (startNew) return first, and
    // results arriving together are replayed in one episode. With the latency model, once the task hub has
    // dispatched the episode's messages; those arriving meanwhile join the same episode, as in a batch.
    const run = () => {
      this.#work
        .exclusive(instanceId, () => this.#runEpisode(instanceId, execution))
        .catch((error: unknown) =>
          this.#log('error', `Durable instance '${instanceId}' failed to advance:`, error),
        )
        .finally(() => this.#work.release());
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
    const now = this.#now();
    const outcome = replayEpisode(record, {
      instanceId,
      handler: this.#registry.orchestrations.get(record.name),
      now,
      events,
      logHandler: this.#logHandler,
      counts: this.#events,
    });
    record.lastUpdatedTime = now.toISOString();
    // The history and the instance's row are written to the task hub's tables before the new work is sent.
    await this.#latency?.delay('task-hub.table');
    recordOutcome(record, outcome);
    await this.#store.put(record);
    if (outcome.status === 'running') this.#dispatch.dispatch(record, execution, outcome.pending);
    else this.#finish(record);
  }

  /** Stops the finished execution's timers and wakes the waiters. */
  #finish(record: InstanceRecord): void {
    this.#events.completions += 1;
    const execution = this.#executions.get(record.instanceId);
    if (execution !== undefined && execution.executionId === record.executionId) {
      clearTimers(execution);
      this.#executions.delete(record.instanceId);
    }
    this.#completionWaiters.finished(toStatus(record));
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
