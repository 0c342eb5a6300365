// The port through which triggers start and inspect orchestrations. In Azure it wraps the
// durable-functions client bound to the invocation; in the local runtime it is the in-process driver.

export type OrchestrationRuntimeStatus =
  'Pending' | 'Running' | 'Completed' | 'ContinuedAsNew' | 'Failed' | 'Terminated';

export interface OrchestrationStatus {
  instanceId: string;
  name: string;
  runtimeStatus: OrchestrationRuntimeStatus;
  input: unknown;
  output: unknown;
  customStatus: unknown;
  createdTime: Date;
  lastUpdatedTime: Date;
}

export interface OrchestrationClient {
  /**
   * Starts `name` under `instanceId`. Rejects with a ConflictError when an instance with that id is
   * Pending or Running (as the Durable Task framework does); a finished instance is replaced.
   */
  startNew(name: string, options: { instanceId: string; input?: unknown }): Promise<string>;
  /** Undefined when no instance has that id. */
  getStatus(instanceId: string): Promise<OrchestrationStatus | undefined>;
  /**
   * Resolves with the status once the instance is Completed, Failed or Terminated. Rejects with
   * OrchestrationWaitTimeout after `timeoutMs`, and with a NotFoundError when no instance has that id.
   */
  waitForCompletion(instanceId: string, timeoutMs: number): Promise<OrchestrationStatus>;
  raiseEvent(instanceId: string, eventName: string, eventData?: unknown): Promise<void>;
  terminate(instanceId: string, reason: string): Promise<void>;
  /**
   * Forgets a finished instance: its status, input, output and history (a deleted conversation keeps nothing in
   * the task hub). False when no instance has that id. A Pending or Running instance → ConflictError: terminate
   * it and purge once it has finished.
   */
  purge(instanceId: string): Promise<boolean>;
}

/** waitForCompletion's time ran out while the instance was still pending or running. */
export class OrchestrationWaitTimeout extends Error {
  constructor(
    readonly instanceId: string,
    timeoutMs: number,
  ) {
    super(`Orchestration '${instanceId}' did not finish within ${timeoutMs} ms.`);
    this.name = 'OrchestrationWaitTimeout';
  }
}

const FINISHED: ReadonlySet<OrchestrationRuntimeStatus> = new Set(['Completed', 'Failed', 'Terminated']);

export function isFinishedStatus(status: OrchestrationRuntimeStatus): boolean {
  return FINISHED.has(status);
}
