// The port of the user's profile (container `profile-facts`, partition userId): one item per fact, and one record
// per consolidated turn of the changes it made. The memory worker writes both; a new conversation's turn reads the
// active facts for its system prompt; the memory API and MCP read and delete them.
// Fact writes are conditioned on the version read: the turns of two conversations of one user are consolidated at
// once (the worker orders turns per conversation only), and forgetting runs beside them, so an unconditional write
// could drop another's provenance entry or turn a superseded fact active again.
// Adapter: Cosmos DB (adapters/cosmos-profile-facts.ts).
import type { ConsolidationRecord, FactStatus, ProfileFact } from './contracts.js';

/**
 * How often a use-case reads a fact, decides and writes it on the version read before giving up (the worker's
 * event is then redelivered, a forget retried): a conflict needs another write of that very fact at that instant,
 * so a handful of tries is plenty and a fact written over and over is a fault worth surfacing.
 */
export const FACT_WRITE_ATTEMPTS = 5;

export interface StoredFact {
  fact: ProfileFact;
  /** Opaque version a later write or delete is conditioned on. */
  version: string;
}

export interface ProfileFacts {
  /** The user's facts, oldest first; only those of the given statuses when `statuses` is set. */
  list(userId: string, options?: { statuses?: readonly FactStatus[] }): Promise<ProfileFact[]>;
  get(userId: string, factId: string): Promise<StoredFact | undefined>;
  /**
   * Writes the fact if still at `version` (undefined: only if there is none yet); 'conflict' when another write
   * came first or, for a version, the fact is gone. The caller reads again and decides again.
   */
  put(fact: ProfileFact, version: string | undefined): Promise<'written' | 'conflict'>;
  /**
   * Removes one fact; false when there was none or, given a `version`, when the fact is no longer at it (changed
   * since, or gone).
   */
  delete(userId: string, factId: string, version?: string): Promise<boolean>;
  /** The facts one of whose sources is in the session (any status). */
  fromSession(userId: string, sessionId: string): Promise<ProfileFact[]>;
  /** The record of a consolidated turn, if one was written. */
  getConsolidation(
    userId: string,
    sessionId: string,
    chatMessageId: string,
  ): Promise<ConsolidationRecord | undefined>;
  /** Writes the record unless one exists; returns the one stored (the earlier one wins). */
  createConsolidation(record: ConsolidationRecord): Promise<ConsolidationRecord>;
  /** Marks the record applied. */
  markApplied(userId: string, recordId: string, appliedAt: string): Promise<void>;
  /** Removes the session's consolidation records; returns how many. */
  deleteConsolidations(userId: string, sessionId: string): Promise<number>;
  /** Removes every fact and record of the user; returns how many items. */
  deleteAll(userId: string): Promise<number>;
}
