// Batches saves of the data file: a change is saved at most `delayMs` after it happens (a burst of writes
// costs one save), and saves never overlap, so the newest snapshot always lands last.

export class FlushScheduler {
  private timer: NodeJS.Timeout | undefined;
  private queue: Promise<void> = Promise.resolve();

  constructor(
    private readonly save: () => Promise<void>,
    private readonly delayMs: number,
    private readonly onBackgroundError: (error: unknown) => void,
  ) {}

  /** Something changed: make sure a save is scheduled. */
  markDirty(): void {
    if (this.timer !== undefined) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      // A failed save is reported; the next change, flush() or stop saves everything again.
      this.flush().catch(this.onBackgroundError);
    }, this.delayMs);
  }

  /** Saves now, after any save already under way. */
  flush(): Promise<void> {
    if (this.timer !== undefined) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
    const run = this.queue.then(() => this.save());
    this.queue = run.catch(() => undefined);
    return run;
  }

  /** Drops a pending timer without saving (the caller saves itself or gives up). */
  cancel(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
  }
}
