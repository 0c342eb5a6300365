// The port of the quota state every instance shares (adapter: adapters/cosmos-quota-state.ts): the leases of a
// user's running turns and their message counter per window, each changed atomically.

export type TurnSlotOutcome =
  /** `alreadyHeld`: the turn held its slot before this take (a post of the same message racing this one). */
  | { taken: true; alreadyHeld?: boolean }
  /** `running`: the turns holding a slot; `nextExpiry`: when the first of their leases runs out. */
  | { taken: false; running: number; nextExpiry: Date };

export interface TurnSlotRequest {
  userId: string;
  /** `{sessionId}/{chatMessageId}`: taking it again while it is held takes nothing more. */
  turn: string;
  max: number;
  leaseSeconds: number;
  now: Date;
}

export type MessageCountOutcome = { counted: true } | { counted: false; count: number };

export interface QuotaState {
  /** A slot for the turn if fewer than `max` unexpired leases are held (the turn's own counts as taken). */
  takeTurnSlot(request: TurnSlotRequest): Promise<TurnSlotOutcome>;
  /** Frees the turn's slot; nothing when it holds none. */
  releaseTurnSlot(userId: string, turn: string): Promise<void>;
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
