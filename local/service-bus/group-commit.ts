// Group commit for the broker's data file: callers that need their change on disk share one write. At most
// one write runs and one waits; whoever asks while a write runs joins the waiting one, which snapshots the
// state only when it starts, so it holds every change made before it.

export class GroupCommit {
  /** The write not yet started, which a new caller joins. */
  private waiting: Promise<void> | undefined;
  /** Settles when the latest write queued so far has finished, successfully or not. */
  private tail: Promise<void> = Promise.resolve();

  constructor(private readonly write: () => Promise<void>) {}

  /** Resolves once a write that started after this call has succeeded; rejects with that write's error. */
  commit(): Promise<void> {
    if (this.waiting) return this.waiting;
    const next = this.tail.then(() => {
      // From here on the state is being written: later changes need the next write.
      this.waiting = undefined;
      return this.write();
    });
    this.waiting = next;
    this.tail = next.catch(() => undefined);
    return next;
  }
}
