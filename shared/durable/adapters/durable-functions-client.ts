// The OrchestrationClient port over durable-functions' DurableClient (Azure). durable-functions 3.x
// reports HTTP outcomes of the extension's API only as Error messages; this maps them to the app's errors.
import type * as df from 'durable-functions';
import { setTimeout as sleep } from 'node:timers/promises';
import { ConflictError, DependencyError, NotFoundError, ensureError } from '../../errors.js';
import {
  OrchestrationWaitTimeout,
  isFinishedStatus,
  type OrchestrationClient,
  type OrchestrationRuntimeStatus,
  type OrchestrationStatus,
} from '../orchestration-client.js';

/** The part of df.DurableClient the adapter uses (so tests can hand-write a fake). */
export type DurableClientPort = Pick<
  df.DurableClient,
  'startNew' | 'getStatus' | 'raiseEvent' | 'terminate' | 'purgeInstanceHistory'
>;

const DEPENDENCY = 'durable-functions';

/** Status polls of waitForCompletion start this far apart and double up to the maximum. */
const FIRST_POLL_MS = 100;
const MAX_POLL_MS = 2_000;

export function createDurableFunctionsClient(
  client: DurableClientPort,
  options: { now?: () => number; sleep?: (ms: number) => Promise<unknown> } = {},
): OrchestrationClient {
  const now = options.now ?? Date.now;
  const wait = options.sleep ?? ((ms: number) => sleep(ms));
  const adapter: OrchestrationClient = {
    async startNew(name, { instanceId, input }) {
      try {
        return await client.startNew(name, { instanceId, input });
      } catch (error) {
        // With overridableExistingInstanceStates = NonRunningStates (the extension's default) the host
        // refuses a Pending/Running id with "An Orchestration instance with the status ... already exists."
        if (/already exists/i.test(ensureError(error).message)) {
          throw new ConflictError(`Orchestration instance '${instanceId}' is already pending or running.`);
        }
        throw dependencyError(`Could not start orchestration '${name}' as '${instanceId}'`, error);
      }
    },

    async getStatus(instanceId) {
      let status: df.DurableOrchestrationStatus;
      try {
        status = await client.getStatus(instanceId);
      } catch (error) {
        // durable-functions throws for an unknown id: "... replied with HTTP 404 response ...".
        if (/\bHTTP 404\b/.test(ensureError(error).message)) return undefined;
        throw dependencyError(`Could not read the status of orchestration '${instanceId}'`, error);
      }
      return toOrchestrationStatus(status);
    },

    // The extension's HTTP API has no long poll for a non-HTTP caller: poll the status with a growing interval.
    async waitForCompletion(instanceId, timeoutMs) {
      const deadline = now() + timeoutMs;
      for (let interval = FIRST_POLL_MS; ; interval = Math.min(interval * 2, MAX_POLL_MS)) {
        const status = await adapter.getStatus(instanceId);
        if (status === undefined)
          throw new NotFoundError(`No orchestration instance with id '${instanceId}'.`);
        if (isFinishedStatus(status.runtimeStatus)) return status;
        const left = deadline - now();
        if (left <= 0) throw new OrchestrationWaitTimeout(instanceId, timeoutMs);
        await wait(Math.min(interval, left));
      }
    },

    async raiseEvent(instanceId, eventName, eventData) {
      try {
        // A finished instance answers 410, which durable-functions resolves: the event is dropped.
        await client.raiseEvent(instanceId, eventName, eventData);
      } catch (error) {
        throw notFoundOr(
          instanceId,
          error,
          `Could not raise '${eventName}' on orchestration '${instanceId}'`,
        );
      }
    },

    async terminate(instanceId, reason) {
      try {
        await client.terminate(instanceId, reason);
      } catch (error) {
        throw notFoundOr(instanceId, error, `Could not terminate orchestration '${instanceId}'`);
      }
    },

    async purge(instanceId) {
      // The task hub's purge does not check the status itself on every backend: the port's rule is kept here.
      const status = await adapter.getStatus(instanceId);
      if (status === undefined) return false;
      if (!isFinishedStatus(status.runtimeStatus))
        throw new ConflictError(
          `Orchestration instance '${instanceId}' is ${status.runtimeStatus}: terminate it before purging it.`,
        );
      try {
        // durable-functions answers an unknown id (404) with instancesDeleted 0.
        const result = await client.purgeInstanceHistory(instanceId);
        return result.instancesDeleted > 0;
      } catch (error) {
        throw dependencyError(`Could not purge orchestration '${instanceId}'`, error);
      }
    },
  };
  return adapter;
}

export function toOrchestrationStatus(status: df.DurableOrchestrationStatus): OrchestrationStatus {
  return {
    instanceId: status.instanceId,
    name: status.name,
    runtimeStatus: toRuntimeStatus(status.runtimeStatus),
    input: status.input ?? null,
    output: status.output ?? null,
    customStatus: status.customStatus ?? null,
    createdTime: new Date(status.createdTime),
    lastUpdatedTime: new Date(status.lastUpdatedTime),
  };
}

/** The port has no Suspended or Canceled: a suspended instance has not finished, a canceled one never will. */
function toRuntimeStatus(status: df.OrchestrationRuntimeStatus | string): OrchestrationRuntimeStatus {
  switch (status) {
    case 'Pending':
    case 'Running':
    case 'Completed':
    case 'ContinuedAsNew':
    case 'Failed':
    case 'Terminated':
      return status;
    case 'Suspended':
      return 'Running';
    case 'Canceled':
      return 'Terminated';
    default:
      throw new DependencyError(
        DEPENDENCY,
        `Durable Functions reported an unknown runtime status '${status}'.`,
      );
  }
}

/** durable-functions rejects with "No instance with ID '...' found." when the host answers 404. */
function notFoundOr(instanceId: string, error: unknown, context: string): Error {
  if (/No instance with ID/i.test(ensureError(error).message)) {
    return new NotFoundError(`No orchestration instance with id '${instanceId}'.`);
  }
  return dependencyError(context, error);
}

function dependencyError(context: string, error: unknown): DependencyError {
  return new DependencyError(DEPENDENCY, `${context}: ${ensureError(error).message}`, { cause: error });
}
