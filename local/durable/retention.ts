// Which finished instances the driver may forget, as a task hub's history purge does: terminal instances
// last updated before the cut-off, except a child whose parent is still running and may need its result.
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
    if (!isFinished(record.runtimeStatus) || !(Date.parse(record.lastUpdatedTime) < cutOff)) continue;
    // After a restart the parent adopts the finished child instead of running it again; keep it until then.
    const parent = record.parent === undefined ? undefined : records.get(record.parent.instanceId);
    if (
      parent !== undefined &&
      parent.executionId === record.parent?.executionId &&
      !isFinished(parent.runtimeStatus)
    ) {
      continue;
    }
    expired.push(record.instanceId);
  }
  return expired;
}
