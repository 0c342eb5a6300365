// Where the local durable driver keeps each orchestration instance: its status and its replay history.
// The driver owns the records; a store only persists them (in memory here; a file-backed store fits the same port).
import type { OrchestrationRuntimeStatus } from '../../shared/durable/orchestration-client.js';
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
  failure?: FailureInfo;
  /** ISO timestamps, so a record is plain JSON. */
  createdTime: string;
  lastUpdatedTime: string;
  /** Set on sub-orchestrations: where to report the result. */
  parent?: { instanceId: string; executionId: string; seq: number };
  history: HistoryEvent[];
}

export interface InstanceStore {
  get(instanceId: string): Promise<InstanceRecord | undefined>;
  /** Inserts or replaces the record with this instance id. */
  put(record: InstanceRecord): Promise<void>;
}

/** Keeps copies, never the caller's objects, so it behaves like a store that serialises. */
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
}
