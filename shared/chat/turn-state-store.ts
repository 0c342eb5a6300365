// The port of a running turn's state, beside working memory in the hot store (hot-turn-state.ts), so the
// orchestration's history holds only ids: each model round that asked for tools and each tool call's result (none
// for a turn answered in its first round). Every write is idempotent: a step run again finds what it already did.
import type { RoundRecord, ToolResultRecord, TurnRecord } from './contracts/documents.js';
import type { TurnRef } from '../conversation/messages.js';

/** A turn record as read, with the stored version a later write is conditioned on. */
export type StoredTurn = TurnRecord & { version: string };

export interface TurnStateStore {
  get(ref: TurnRef): Promise<StoredTurn | undefined>;
  /**
   * Adds a round to the turn's record, creating the record (from `turn`, whose rounds are ignored) when `turn`
   * was not read from the store. A round with that number already stored is kept and returned instead.
   */
  addRound(turn: TurnRecord | StoredTurn, round: RoundRecord): Promise<RoundRecord>;
  /** Every stored tool result of the turn, by round then index. */
  listToolResults(ref: TurnRef): Promise<ToolResultRecord[]>;
  getToolResult(ref: TurnRef, round: number, index: number): Promise<ToolResultRecord | undefined>;
  putToolResult(ref: TurnRef, result: ToolResultRecord): Promise<void>;
  /** Records its user's answer to a call that waited for their yes: false when it had one already. */
  recordApprovalAnswer(
    ref: TurnRef,
    approvalId: string,
    answer: { approved: boolean; answeredAt: string },
  ): Promise<boolean>;
  /** Marks the turn as the session's one waiting for its user's yes (the session's next message denies it). */
  markParked(ref: TurnRef): Promise<void>;
  /** The session's turn marked last as waiting for its user's yes (it may have gone on, or ended, since). */
  parkedTurn(sessionId: string): Promise<string | undefined>;
}
