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
  raiseEvent(instanceId: string, eventName: string, eventData?: unknown): Promise<void>;
  terminate(instanceId: string, reason: string): Promise<void>;
}
