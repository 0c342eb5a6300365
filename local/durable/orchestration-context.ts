// The `context.df` object an orchestrator receives from the local driver: the part of durable-functions
// v3's DurableOrchestrationContext that orchestrators use, typed as the real class so the same generator
// functions compile and run unchanged. Calls only create tasks; the replay executor decides what they mean.
import type * as df from 'durable-functions';
import { toRetryPolicy } from './retry-policy.js';
import { AtomicTask, LocalTimerTask, WhenAllTask, WhenAnyTask, toLocalTasks } from './tasks.js';

export class LocalDurableOrchestrationContext implements df.DurableOrchestrationContext {
  /** Only sub-orchestrations have a parent, and the driver runs none. */
  readonly parentInstanceId: string | undefined = undefined;
  readonly version: string | undefined = undefined;
  isReplaying = false;
  /** Placeholder until the executor reads the first orchestratorStarted event. */
  currentUtcDateTime = new Date(0);
  customStatus: unknown = undefined;
  readonly Task = {
    all: (tasks: df.Task[]): df.Task => new WhenAllTask(toLocalTasks(tasks, 'Task.all')),
    any: (tasks: df.Task[]): df.Task => new WhenAnyTask(toLocalTasks(tasks, 'Task.any')),
  };
  readonly #input: unknown;

  constructor(
    readonly instanceId: string,
    input: unknown,
  ) {
    this.#input = input;
  }

  getInput<T>(): T {
    return this.#input as T;
  }

  callActivity(name: string, input?: unknown): df.Task {
    return new AtomicTask({ kind: 'activity', name, input });
  }

  callActivityWithRetry(name: string, retryOptions: df.RetryOptions, input?: unknown): df.Task {
    return new AtomicTask({ kind: 'activity', name, input, retry: toRetryPolicy(retryOptions) });
  }

  createTimer(fireAt: Date): df.TimerTask {
    return new LocalTimerTask(new Date(fireAt));
  }

  waitForExternalEvent(name: string): df.Task {
    return new AtomicTask({ kind: 'event', name });
  }

  setCustomStatus(customStatusObject: unknown): void {
    this.customStatus = customStatusObject;
  }

  newGuid(): string {
    return unsupported('newGuid');
  }

  callSubOrchestrator(): df.Task {
    return unsupported('callSubOrchestrator');
  }

  callSubOrchestratorWithRetry(): df.Task {
    return unsupported('callSubOrchestratorWithRetry');
  }

  callEntity(): df.Task {
    return unsupported('callEntity');
  }

  signalEntity(): void {
    unsupported('signalEntity');
  }

  lock(): df.Task {
    return unsupported('lock');
  }

  isLocked(): df.LockState {
    return unsupported('isLocked');
  }

  callHttp(): df.Task {
    return unsupported('callHttp');
  }

  continueAsNew(): void {
    unsupported('continueAsNew');
  }
}

function unsupported(api: string): never {
  throw new Error(`context.df.${api} is not supported by the local durable driver; the app does not use it.`);
}
