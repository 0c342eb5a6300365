// The port of a running turn's state, kept beside the session's working memory in the hot store so the
// orchestration's history holds only ids and small results: each model round that asked for tools, and each tool
// call's result. A turn answered in its first round stores none. Every write is idempotent, so an activity that
// runs again after a crash finds what it already did. Adapter: Cosmos DB (adapters/cosmos-turn-state-store.ts).
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
}
