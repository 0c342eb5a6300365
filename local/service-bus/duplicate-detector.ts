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
    for (const [id, acceptedAt] of this.accepted) {
      if (time - acceptedAt < this.windowMs) break;
      this.accepted.delete(id);
    }
    if (this.accepted.has(messageId)) return true;
    this.accepted.set(messageId, time);
    return false;
  }
}
