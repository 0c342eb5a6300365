// The Task objects an orchestrator yields, with durable-functions v3's observable behaviour: a task gets
// its sequence number when first yielded (not when created), Task.all fails with its first failure,
// and Task.any completes with the winning child task itself.
import type * as df from 'durable-functions';
import type { RetryPolicy } from './retry-policy.js';

export type TaskAction =
  | { kind: 'activity'; name: string; input: unknown; retry?: RetryPolicy }
  | { kind: 'timer'; fireAt: Date }
  | { kind: 'event'; name: string };

type TaskState = 'running' | 'completed' | 'failed';

export abstract class LocalTask implements df.Task {
  #state: TaskState = 'running';
  result?: unknown;
  readonly #parents: CompoundTask[] = [];

  /** As in durable-functions: true only for success; a failed task is `isFaulted`. */
  get isCompleted(): boolean {
    return this.#state === 'completed';
  }

  get isFaulted(): boolean {
    return this.#state === 'failed';
  }

  get hasResult(): boolean {
    return this.#state !== 'running';
  }

  /** Later settlements are ignored: a task's first outcome is its outcome. */
  settle(succeeded: boolean, value: unknown): void {
    if (this.hasResult) return;
    this.#state = succeeded ? 'completed' : 'failed';
    this.result = value;
    for (const parent of this.#parents) parent.childSettled(this);
  }

  addParent(parent: CompoundTask): void {
    this.#parents.push(parent);
  }
}

export class AtomicTask extends LocalTask {
  /** Assigned when the orchestrator first yields the task (events never get one). */
  seq: number | undefined;
  tracked = false;

  constructor(readonly action: TaskAction) {
    super();
  }
}

export class LocalTimerTask extends AtomicTask implements df.TimerTask {
  isCanceled = false;

  constructor(readonly fireAt: Date) {
    super({ kind: 'timer', fireAt });
  }

  cancel(): void {
    if (this.hasResult) throw new Error('Cannot cancel a completed task.');
    this.isCanceled = true;
  }
}

export abstract class CompoundTask extends LocalTask {
  constructor(
    readonly children: readonly LocalTask[],
    operation: string,
  ) {
    super();
    // Same message as durable-functions, so an empty fan-out fails locally exactly as it would in Azure.
    if (children.length === 0) {
      throw new Error(
        `When constructing a CompoundTask (such as Task.all() or Task.any()), you must specify at least one Task. (${operation})`,
      );
    }
    for (const child of children) child.addParent(this);
    // Children that already have a result (yielded earlier) count at once, in list order.
    for (const child of children) if (child.hasResult) this.childSettled(child);
  }

  abstract childSettled(child: LocalTask): void;
}

export class WhenAllTask extends CompoundTask {
  constructor(children: readonly LocalTask[]) {
    super(children, 'Task.all');
  }

  childSettled(child: LocalTask): void {
    if (child.isFaulted) this.settle(false, child.result);
    else if (this.children.every((c) => c.isCompleted)) {
      this.settle(
        true,
        this.children.map((c) => c.result),
      );
    }
  }
}

export class WhenAnyTask extends CompoundTask {
  constructor(children: readonly LocalTask[]) {
    super(children, 'Task.any');
  }

  childSettled(child: LocalTask): void {
    this.settle(true, child);
  }
}

/** The leaves of a (possibly nested) task, in the order durable-functions numbers them. */
export function atomicLeaves(task: LocalTask): AtomicTask[] {
  if (task instanceof AtomicTask) return [task];
  if (task instanceof CompoundTask) return task.children.flatMap(atomicLeaves);
  return [];
}

export function toLocalTasks(tasks: readonly df.Task[], operation: string): LocalTask[] {
  if (!Array.isArray(tasks) || !tasks.every((t) => t instanceof LocalTask)) {
    throw new Error(
      `${operation} received a non-valid input: pass an array of tasks created by this context.`,
    );
  }
  return tasks;
}
