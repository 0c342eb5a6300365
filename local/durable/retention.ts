// Which finished instances the driver may forget, as a task hub's history purge does: terminal instances
// last updated before the cut-off.
import type { OrchestrationRuntimeStatus } from '../../shared/durable/orchestration-client.js';
import type { InstanceRecord } from './instance-store.js';

const FINISHED: readonly OrchestrationRuntimeStatus[] = ['Completed', 'Failed', 'Terminated'];

export function isFinished(status: OrchestrationRuntimeStatus): boolean {
  return FINISHED.includes(status);
}

export function expiredInstanceIds(records: ReadonlyMap<string, InstanceRecord>, before: Date): string[] {
  const cutOff = before.getTime();
  const expired: string[] = [];
  for (const record of records.values()) {
    if (isFinished(record.runtimeStatus) && Date.parse(record.lastUpdatedTime) < cutOff)
      expired.push(record.instanceId);
  }
  return expired;
}
