// How the local durable driver speaks of an instance to its callers: its record as the client's status, and the
// error for an id it does not know.
import { NotFoundError } from '../../shared/errors.js';
import type { OrchestrationStatus } from '../../shared/durable/orchestration-client.js';
import type { InstanceRecord } from './instance-store.js';

export function notFound(instanceId: string): NotFoundError {
  return new NotFoundError(`No orchestration instance with id '${instanceId}'.`);
}

export function toStatus(record: InstanceRecord): OrchestrationStatus {
  return {
    instanceId: record.instanceId,
    name: record.name,
    runtimeStatus: record.runtimeStatus,
    input: record.input ?? null,
    output: record.output ?? null,
    customStatus: record.customStatus ?? null,
    createdTime: new Date(record.createdTime),
    lastUpdatedTime: new Date(record.lastUpdatedTime),
  };
}
