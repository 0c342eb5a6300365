// Service Bus duplicate detection for one queue or topic: a message id seen within the window is dropped.
// Only accepted sends start a window; a dropped duplicate does not extend it.

export class DuplicateDetector {
  /** message id → when it was accepted; insertion order is time order, so expiry pops from the front. */
  private readonly accepted = new Map<string, number>();

  constructor(
    private readonly windowMs: number,
    private readonly now: () => number,
  ) {}

  /** True when the id was accepted within the window (drop the message); otherwise records it as accepted. */
  isDuplicate(messageId: string): boolean {
    const time = this.now();
    this.forgetExpired(time);
    if (this.accepted.has(messageId)) return true;
    this.accepted.set(messageId, time);
    return false;
  }

  /** The ids still within the window with when each was accepted (epoch ms), oldest first. */
  history(): [messageId: string, acceptedAt: number][] {
    this.forgetExpired(this.now());
    return [...this.accepted];
  }

  /** Takes back a saved history (a restart keeps the window); ids whose window has passed are left out. */
  restore(history: readonly (readonly [messageId: string, acceptedAt: number])[]): void {
    const merged = [...this.accepted, ...history].sort(([, a], [, b]) => a - b);
    this.accepted.clear();
    for (const [id, acceptedAt] of merged) {
      // The newest acceptance of an id wins, as a later send would have restarted its window.
      this.accepted.delete(id);
      this.accepted.set(id, acceptedAt);
    }
    this.forgetExpired(this.now());
  }

  private forgetExpired(time: number): void {
    for (const [id, acceptedAt] of this.accepted) {
      if (time - acceptedAt < this.windowMs) break;
      this.accepted.delete(id);
    }
  }
}
