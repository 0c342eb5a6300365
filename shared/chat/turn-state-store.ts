// The port of a running turn's state, kept beside the session's working memory in the hot store so the
// orchestration's history holds only ids and small results: the prompt the turn started from, each LLM round's
// output and each tool call's result. Every write is idempotent, so an activity that runs again after a crash
// finds what it already did. Adapter: Cosmos DB (adapters/cosmos-turn-state-store.ts).
import type { RoundRecord, ToolResultRecord, TurnRecord, TurnRef } from './contracts.js';

export interface TurnStateStore {
  get(ref: TurnRef): Promise<TurnRecord | undefined>;
  /** Creates the record unless it exists; returns the stored one either way. */
  create(record: TurnRecord): Promise<TurnRecord>;
  /** Adds a round unless one with that number is stored; returns the stored round. */
  addRound(ref: TurnRef, round: RoundRecord): Promise<RoundRecord>;
  getToolResult(ref: TurnRef, round: number, index: number): Promise<ToolResultRecord | undefined>;
  putToolResult(ref: TurnRef, result: ToolResultRecord): Promise<void>;
}
