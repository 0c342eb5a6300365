// The local durable driver's dispatch of an episode's new work: activities run with their retry policy (as late as
// the task hub sends them under the latency model) and durable timers armed, each result posted to its instance.
import { performance } from 'node:perf_hooks';
import type { LogHandler, LogLevel } from '@azure/functions';
import type * as df from 'durable-functions';
import type { AzureLatencyModel } from '../latency/azure-latency.js';
import { runActivity } from './activity-runner.js';
import type { HistoryEvent } from './history.js';
import type { InstanceRecord } from './instance-store.js';
import type { InstanceWork } from './instance-work.js';
import type { PendingWork } from './replay.js';
import type { TaskHubEvents } from './task-hub-events.js';

/** In-memory state of an instance's current execution; the durable part (history, inbox) lives in the store. */
export interface Execution {
  executionId: string;
  episodeQueued: boolean;
  /** Set after a restart: the next episode replays even with no new message, to restart the pending work. */
  resuming: boolean;
  /** Sequence numbers already started in this process, so a replay never starts the same work twice. */
  started: Set<number>;
  timers: Map<number, NodeJS.Timeout>;
}

export function newExecution(executionId: string): Execution {
  return { executionId, episodeQueued: false, resuming: false, started: new Set(), timers: new Map() };
}

export function clearTimers(execution: Execution): void {
  for (const timer of execution.timers.values()) clearTimeout(timer);
  execution.timers.clear();
}

/** What the dispatch takes from the driver around it. */
export interface DispatchingDriver {
  readonly activities: ReadonlyMap<string, df.ActivityHandler>;
  readonly now: () => Date;
  /** Longest a durable timer sleeps before reading `now` again. */
  readonly timerResolutionMs: number;
  readonly logHandler: LogHandler | undefined;
  readonly latency: AzureLatencyModel | undefined;
  readonly work: InstanceWork;
  readonly counts: TaskHubEvents;
  /** Once closed, no work starts, and a message still on its way is left for the next start. */
  closed(): boolean;
  /** Saves events in the instance's inbox and queues an episode. */
  deliver(instanceId: string, executionId: string, events: HistoryEvent[]): Promise<void>;
  /** `deliver` for messages (results, timers) whose failure has no caller to report to. */
  post(instanceId: string, executionId: string, events: HistoryEvent[]): void;
  log(level: LogLevel, ...args: unknown[]): void;
}

export class WorkDispatch {
  readonly #driver: DispatchingDriver;
  readonly #retrySleeps = new Set<{ timer: NodeJS.Timeout; resolve: (completed: boolean) => void }>();

  constructor(driver: DispatchingDriver) {
    this.#driver = driver;
  }

  dispatch(record: InstanceRecord, execution: Execution, pending: readonly PendingWork[]): void {
    const waitedOn = new Set(pending.map((work) => work.seq));
    // Timers the orchestrator cancelled (or no longer waits on) stop here.
    for (const [seq, timer] of execution.timers) {
      if (!waitedOn.has(seq)) {
        clearTimeout(timer);
        execution.timers.delete(seq);
      }
    }
    if (this.#driver.closed()) return;
    for (const work of pending) {
      if (execution.started.has(work.seq)) continue;
      execution.started.add(work.seq);
      switch (work.kind) {
        case 'activity':
          this.#startActivity(record.instanceId, execution, work);
          break;
        case 'timer':
          this.#driver.counts.timers += 1;
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
    this.#driver.work.begin();
    this.#driver.counts.activities += 1;
    const latency = this.#driver.latency;
    const ran =
      latency === undefined
        ? this.#runStartedActivity(instanceId, execution, work)
        : latency.delay('task-hub.activity-dispatch').then(() =>
            // Closed while the message was on its way: it is still in the history, and the next start runs it.
            this.#driver.closed() ? undefined : this.#runStartedActivity(instanceId, execution, work),
          );
    ran
      .catch((error: unknown) =>
        this.#driver.log('error', `Activity '${work.name}' could not be run:`, error),
      )
      .finally(() => this.#driver.work.release());
  }

  #runStartedActivity(
    instanceId: string,
    execution: Execution,
    work: Extract<PendingWork, { kind: 'activity' }>,
  ): Promise<void> {
    return runActivity({
      name: work.name,
      handler: this.#driver.activities.get(work.name),
      input: work.input,
      ...(work.retry ? { retry: work.retry } : {}),
      ...(this.#driver.logHandler ? { logHandler: this.#driver.logHandler } : {}),
      sleep: (ms) => this.#sleep(ms),
      clock: () => performance.now(),
    }).then((outcome) => {
      const event: HistoryEvent = outcome.succeeded
        ? { type: 'taskCompleted', seq: work.seq, result: outcome.result }
        : { type: 'taskFailed', seq: work.seq, failure: outcome.failure };
      this.#driver.counts.activityResults += 1;
      return this.#driver.deliver(instanceId, execution.executionId, [event]);
    });
  }

  #armTimer(instanceId: string, execution: Execution, seq: number, fireAt: Date): void {
    const check = () => {
      execution.timers.delete(seq);
      const remaining = fireAt.getTime() - this.#driver.now().getTime();
      if (remaining <= 0) {
        this.#driver.counts.timersFired += 1;
        this.#driver.post(instanceId, execution.executionId, [{ type: 'timerFired', seq }]);
        return;
      }
      // Short hops re-read the clock (a test clock can jump) and stay within setTimeout's range.
      execution.timers.set(seq, setTimeout(check, Math.min(remaining, this.#driver.timerResolutionMs)));
    };
    check();
  }

  #sleep(ms: number): Promise<boolean> {
    if (this.#driver.closed()) return Promise.resolve(false);
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

  /** Cuts the activities' retry waits short (the driver is closing). */
  cutSleepsShort(): void {
    for (const sleep of this.#retrySleeps) {
      clearTimeout(sleep.timer);
      sleep.resolve(false);
    }
    this.#retrySleeps.clear();
  }
}
