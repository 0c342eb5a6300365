// Which deliveries may start now, across the whole local broker: queue deliveries (a turn's own work) always do;
// topic-subscription deliveries (background jobs that Azure runs on other instances) yield while turns run.

export type DeliveryKind = 'foreground' | 'background';

/**
 * In Azure the history and memory triggers scale out on their own and never share an event loop with the chat
 * queue's trigger; the one-process local runtime runs them all on one. While any queue delivery is under way, a
 * subscription delivery (a session held, for sessionful entities) starts only while fewer than
 * `maxBackgroundWhileBusy` are under way; the others wait, in their entity's order, and start as soon as a running one
 * ends or the queues fall quiet. Nothing waits forever: once no queue delivery runs, subscriptions go back to their
 * own concurrency.
 */
export class DeliveryGate {
  private foreground = 0;
  private background = 0;
  /** The pumps of the receivers whose deliveries yield, called when a held-back delivery may start. */
  private readonly waiters = new Set<() => void>();

  constructor(private readonly maxBackgroundWhileBusy: number = Number.POSITIVE_INFINITY) {}

  mayStart(kind: DeliveryKind): boolean {
    return kind === 'foreground' || this.foreground === 0 || this.background < this.maxBackgroundWhileBusy;
  }

  started(kind: DeliveryKind): void {
    if (kind === 'foreground') this.foreground += 1;
    else this.background += 1;
  }

  ended(kind: DeliveryKind): void {
    if (kind === 'foreground') this.foreground -= 1;
    else this.background -= 1;
    if (this.mayStart('background')) for (const pump of [...this.waiters]) pump();
  }

  /** A background receiver's pump, called again whenever its held-back deliveries may start; returns the undo. */
  onOpening(pump: () => void): () => void {
    this.waiters.add(pump);
    return () => this.waiters.delete(pump);
  }
}
