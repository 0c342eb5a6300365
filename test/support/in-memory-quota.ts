// An in-memory QuotaState with the Cosmos DB adapter's semantics (leases that expire, a counter per window), for
// use-case tests and the in-process test app.
import type {
  MessageCountOutcome,
  QuotaState,
  TurnSlotOutcome,
  TurnSlotRequest,
} from '../../shared/quota/quota-state.js';

export class MemoryQuotaState implements QuotaState {
  readonly leases = new Map<string, { turn: string; expiresAt: number }[]>();
  readonly windows = new Map<string, number>();

  takeTurnSlot({ userId, turn, max, leaseSeconds, now }: TurnSlotRequest): Promise<TurnSlotOutcome> {
    const live = (this.leases.get(userId) ?? []).filter((lease) => lease.expiresAt > now.getTime());
    if (live.some((lease) => lease.turn === turn)) return Promise.resolve({ taken: true, alreadyHeld: true });
    if (live.length >= max)
      return Promise.resolve({
        taken: false,
        running: live.length,
        nextExpiry: new Date(Math.min(...live.map((lease) => lease.expiresAt))),
      });
    this.leases.set(userId, [...live, { turn, expiresAt: now.getTime() + leaseSeconds * 1000 }]);
    return Promise.resolve({ taken: true });
  }

  releaseTurnSlot(userId: string, turn: string): Promise<void> {
    const leases = this.leases.get(userId);
    if (leases !== undefined)
      this.leases.set(
        userId,
        leases.filter((lease) => lease.turn !== turn),
      );
    return Promise.resolve();
  }

  countMessage(userId: string, window: { start: Date }, max: number): Promise<MessageCountOutcome> {
    const key = `${userId}@${window.start.toISOString()}`;
    const count = this.windows.get(key) ?? 0;
    if (count >= max) return Promise.resolve({ counted: false, count });
    this.windows.set(key, count + 1);
    return Promise.resolve({ counted: true });
  }

  uncountMessage(userId: string, windowStart: Date): Promise<void> {
    const key = `${userId}@${windowStart.toISOString()}`;
    this.windows.set(key, Math.max(0, (this.windows.get(key) ?? 0) - 1));
    return Promise.resolve();
  }

  /** The turns holding a slot of the user now. */
  running(userId: string, now = new Date()): string[] {
    return (this.leases.get(userId) ?? [])
      .filter((lease) => lease.expiresAt > now.getTime())
      .map((lease) => lease.turn);
  }
}
