// The local durable driver's bookkeeping of work in flight: one queue per instance, so episodes, starts and
// terminations of one instance never interleave, and a count of running work that `idle()` waits out.

export class InstanceWork {
  /** Per-instance queue: episodes, starts and terminations of one instance never interleave. */
  readonly #locks = new Map<string, Promise<void>>();
  #busy = 0;
  #idleWaiters: (() => void)[] = [];

  /** Runs `work` after whatever the instance's queue holds. */
  exclusive<T>(instanceId: string, work: () => Promise<T>): Promise<T> {
    const previous = this.#locks.get(instanceId) ?? Promise.resolve();
    const result = previous.then(work);
    const done = result.then(
      () => undefined,
      () => undefined,
    );
    this.#locks.set(instanceId, done);
    void done.then(() => {
      if (this.#locks.get(instanceId) === done) this.#locks.delete(instanceId);
    });
    return result;
  }

  /** Counts one piece of work as running until `release()`. */
  begin(): void {
    this.#busy++;
  }

  release(): void {
    this.#busy--;
    if (this.#busy === 0) for (const resolve of this.#idleWaiters.splice(0)) resolve();
  }

  /** Resolves when no work counted by `begin()` is running. */
  idle(): Promise<void> {
    if (this.#busy === 0) return Promise.resolve();
    return new Promise((resolve) => this.#idleWaiters.push(resolve));
  }
}
