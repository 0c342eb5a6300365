// The port of the quota state every instance shares (adapter: adapters/cosmos-quota-state.ts): the leases of a
// user's running turns and their message counter per window, each changed atomically.

export type TurnSlotOutcome =
  /** `alreadyHeld`: the turn held its slot before this take (a post of the same message racing this one). */
  | { taken: true; alreadyHeld?: boolean }
  /** `running`: the turns holding a slot; `nextExpiry`: when the first of their leases runs out. */
  | { taken: false; running: number; nextExpiry: Date };

/** What a lease holds back of the spend limits until it is settled. */
export interface Reservation {
  tokens: number;
  costUsd: number;
  bytes: number;
}

export interface TurnSlotRequest {
  userId: string;
  /** `{sessionId}/{chatMessageId}`: taking it again while it is held takes nothing more. */
  turn: string;
  /** Most unexpired leases holding a slot; 0: this lease takes no slot and none is counted. */
  max: number;
  leaseSeconds: number;
  now: Date;
  /** Held in the same write as the slot, until the lease is settled or expires. */
  reserve?: Reservation;
  /**
   * Called with what the user's other unexpired leases reserve, after they are read and before the write (so usage
   * read inside it counts each settled turn in one or the other); throws to refuse the lease. `leases` names each
   * unexpired lease with the bytes it holds.
   */
  check?: (open: Reservation, leases: readonly { turn: string; bytes: number }[]) => Promise<void>;
}

export type MessageCountOutcome = { counted: true } | { counted: false; count: number };

export interface QuotaState {
  /** A slot for the turn if fewer than `max` unexpired leases are held (the turn's own counts as taken). */
  takeTurnSlot(request: TurnSlotRequest): Promise<TurnSlotOutcome>;
  /**
   * Frees the turn's slot; nothing when it holds none. With `settleSeconds`, a lease that reserved tokens or cost
   * keeps them (its work ended, its usage is being recorded) for at most that long, and a release of a lease
   * already settling drops it. Without, the lease is dropped.
   */
  releaseTurnSlot(userId: string, turn: string, settleSeconds?: number): Promise<void>;
  /** What the user's leases unexpired at `now` reserve, added up (one read; nothing is written). */
  openReservations(userId: string, now: Date): Promise<Reservation>;
  /** Counts one message in the window starting at `windowStart` if fewer than `max` are counted there. */
  countMessage(
    userId: string,
    window: { start: Date; seconds: number },
    max: number,
  ): Promise<MessageCountOutcome>;
  /** Takes back one message counted in the window (a request refused by another limit changes nothing). */
  uncountMessage(userId: string, windowStart: Date): Promise<void>;
}

export function turnKey(turn: { sessionId: string; chatMessageId: string }): string {
  return `${turn.sessionId}/${turn.chatMessageId}`;
}
