// Callers of the local durable driver waiting for an instance to finish: registered before the status is read,
// so a finish in between is not missed, and each settled once, by the finish or by its timeout.
import { ensureError, type NotFoundError } from '../../shared/errors.js';
import {
  OrchestrationWaitTimeout,
  isFinishedStatus,
  type OrchestrationStatus,
} from '../../shared/durable/orchestration-client.js';

export class CompletionWaiters {
  readonly #completionWaiters = new Map<string, Set<(status: OrchestrationStatus) => void>>();

  /**
   * Resolves with the status once the instance is Completed, Failed or Terminated (as `readStatus` or a later
   * `finished` reports it); rejects with `notFound` when there is no such instance, and after `timeoutMs`.
   */
  wait(
    instanceId: string,
    timeoutMs: number,
    readStatus: () => Promise<OrchestrationStatus | undefined>,
    notFound: () => NotFoundError,
  ): Promise<OrchestrationStatus> {
    return new Promise((resolve, reject) => {
      const waiters = this.#completionWaiters.get(instanceId) ?? new Set();
      this.#completionWaiters.set(instanceId, waiters);
      const settle = (action: () => void) => {
        clearTimeout(timer);
        waiters.delete(onFinished);
        if (waiters.size === 0 && this.#completionWaiters.get(instanceId) === waiters) {
          this.#completionWaiters.delete(instanceId);
        }
        action();
      };
      const onFinished = (status: OrchestrationStatus) => settle(() => resolve(status));
      const timer = setTimeout(
        () => settle(() => reject(new OrchestrationWaitTimeout(instanceId, timeoutMs))),
        timeoutMs,
      );
      waiters.add(onFinished);
      // Registered before reading, so a finish in between is not missed.
      readStatus().then(
        (status) => {
          if (status === undefined) settle(() => reject(notFound()));
          else if (isFinishedStatus(status.runtimeStatus)) onFinished(status);
        },
        (error: unknown) => settle(() => reject(ensureError(error))),
      );
    });
  }

  /** Wakes the instance's waiters with its final status. */
  finished(status: OrchestrationStatus): void {
    for (const waiter of [...(this.#completionWaiters.get(status.instanceId) ?? [])]) waiter(status);
  }
}
