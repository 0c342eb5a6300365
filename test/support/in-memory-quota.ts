// An in-memory QuotaState with the Cosmos DB adapter's semantics (leases that expire, reserve and settle, a counter
// per window), for use-case tests and the in-process test app.
import type {
  MessageCountOutcome,
  QuotaState,
  Reservation,
  TurnSlotOutcome,
  TurnSlotRequest,
} from '../../shared/quota/quota-state.js';

interface Lease extends Reservation {
  turn: string;
  expiresAt: number;
  slot: boolean;
  settling: boolean;
}

export class MemoryQuotaState implements QuotaState {
  readonly leases = new Map<string, Lease[]>();
  readonly windows = new Map<string, number>();

  /** Bumped by every write: a take whose check awaited while another wrote reads again, as If-Match makes it. */
  #version = 0;

  async takeTurnSlot(request: TurnSlotRequest): Promise<TurnSlotOutcome> {
    const { userId, turn, max, leaseSeconds, now, reserve, check } = request;
    for (;;) {
      const version = this.#version;
      const live = (this.leases.get(userId) ?? []).filter((lease) => lease.expiresAt > now.getTime());
      if (live.some((lease) => lease.turn === turn)) return { taken: true, alreadyHeld: true };
      const slots = live.filter((lease) => lease.slot);
      if (max > 0 && slots.length >= max)
        return {
          taken: false,
          running: slots.length,
          nextExpiry: new Date(Math.min(...slots.map((lease) => lease.expiresAt))),
        };
      await check?.(
        this.reserved(userId, now),
        live.map((lease) => ({ turn: lease.turn, bytes: lease.bytes })),
      );
      if (version !== this.#version) continue;
      const { tokens = 0, costUsd = 0, bytes = 0 } = reserve ?? {};
      const lease = { turn, expiresAt: now.getTime() + leaseSeconds * 1000, slot: max > 0, settling: false };
      this.leases.set(userId, [...live, { ...lease, tokens, costUsd, bytes }]);
      this.#version += 1;
      return { taken: true };
    }
  }

  releaseTurnSlot(userId: string, turn: string, settleSeconds?: number): Promise<void> {
    const leases = this.leases.get(userId) ?? [];
    const held = leases.find((lease) => lease.turn === turn);
    const others = leases.filter((lease) => lease.turn !== turn);
    const settles =
      held !== undefined &&
      settleSeconds !== undefined &&
      !held.settling &&
      (held.tokens > 0 || held.costUsd > 0);
    this.leases.set(
      userId,
      settles
        ? [
            ...others,
            {
              ...held,
              slot: false,
              settling: true,
              bytes: 0,
              expiresAt: Math.min(held.expiresAt, Date.now() + settleSeconds * 1000),
            },
          ]
        : others,
    );
    this.#version += 1;
    return Promise.resolve();
  }

  openReservations(userId: string, now: Date): Promise<Reservation> {
    return Promise.resolve(this.reserved(userId, now));
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
      .filter((lease) => lease.expiresAt > now.getTime() && lease.slot)
      .map((lease) => lease.turn);
  }

  /** What the user's unexpired leases reserve now. */
  reserved(userId: string, now = new Date()): Reservation {
    return (this.leases.get(userId) ?? [])
      .filter((lease) => lease.expiresAt > now.getTime())
      .reduce(
        (sum, lease) => ({
          tokens: sum.tokens + lease.tokens,
          costUsd: sum.costUsd + lease.costUsd,
          bytes: sum.bytes + lease.bytes,
        }),
        { tokens: 0, costUsd: 0, bytes: 0 },
      );
  }
}
