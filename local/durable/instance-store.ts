// Where the local durable driver keeps each orchestration instance: its status, its replay history and the
// messages not yet replayed. The driver owns the records; a store only keeps them (in memory, or in a file).
import {
  isFinishedStatus,
  type OrchestrationRuntimeStatus,
} from '../../shared/durable/orchestration-client.js';
import type { FailureInfo, HistoryEvent } from './history.js';

export interface InstanceRecord {
  instanceId: string;
  /** Changes when a finished instance is replaced, so late results of the old run are recognised and dropped. */
  executionId: string;
  name: string;
  input: unknown;
  runtimeStatus: OrchestrationRuntimeStatus;
  output: unknown;
  customStatus: unknown;
  failure?: FailureInfo | undefined;
  /** ISO timestamps, so a record is plain JSON. */
  createdTime: string;
  lastUpdatedTime: string;
  history: HistoryEvent[];
  /**
   * Delivered but not yet replayed (the start, raised events, results): the task hub's control-queue
   * messages. Kept with the record so a message acknowledged to its sender survives a restart.
   */
  inbox: HistoryEvent[];
}

export interface InstanceStore {
  get(instanceId: string): Promise<InstanceRecord | undefined>;
  /** Inserts or replaces the record with this instance id. */
  put(record: InstanceRecord): Promise<void>;
  /** Every record, for resuming instances after a restart. */
  list(): Promise<InstanceRecord[]>;
  /** Deletes the instance's record; false when there was none. */
  delete(instanceId: string): Promise<boolean>;
  /** Deletes finished instances last updated before `before` and returns their ids. */
  purgeFinished(before: Date): Promise<string[]>;
  /** Resolves once every change made so far would survive a crash. */
  flush(): Promise<void>;
  /** Saves everything; the driver makes no changes after this. */
  close(): Promise<void>;
}

/**
 * Which instances a purge forgets, as a task hub's history purge does: finished ones last updated before
 * `before`.
 */
export function expiredInstanceIds(records: ReadonlyMap<string, InstanceRecord>, before: Date): string[] {
  const cutOff = before.getTime();
  const expired: string[] = [];
  for (const record of records.values()) {
    if (isFinishedStatus(record.runtimeStatus) && Date.parse(record.lastUpdatedTime) < cutOff)
      expired.push(record.instanceId);
  }
  return expired;
}

/** Keeps copies, never the caller's objects, so it behaves like a store that serialises. Nothing survives the process. */
export class InMemoryInstanceStore implements InstanceStore {
  readonly #records = new Map<string, InstanceRecord>();

  get(instanceId: string): Promise<InstanceRecord | undefined> {
    const record = this.#records.get(instanceId);
    return Promise.resolve(record === undefined ? undefined : structuredClone(record));
  }

  put(record: InstanceRecord): Promise<void> {
    this.#records.set(record.instanceId, structuredClone(record));
    return Promise.resolve();
  }

  list(): Promise<InstanceRecord[]> {
    return Promise.resolve([...this.#records.values()].map((record) => structuredClone(record)));
  }

  delete(instanceId: string): Promise<boolean> {
    return Promise.resolve(this.#records.delete(instanceId));
  }

  purgeFinished(before: Date): Promise<string[]> {
    const expired = expiredInstanceIds(this.#records, before);
    for (const instanceId of expired) this.#records.delete(instanceId);
    return Promise.resolve(expired);
  }

  flush(): Promise<void> {
    return Promise.resolve();
  }

  close(): Promise<void> {
    return Promise.resolve();
  }
}
