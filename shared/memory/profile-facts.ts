// The port of the user's profile (container `profile-facts`, partition userId): one item per fact, and one record
// per consolidated turn of the changes it made. The memory worker writes both; a new conversation's turn reads the
// active facts for its system prompt; the memory API and MCP read and delete them.
// Adapter: Cosmos DB (adapters/cosmos-profile-facts.ts).
import type { ConsolidationRecord, FactStatus, ProfileFact } from './contracts.js';

export interface ProfileFacts {
  /** The user's facts, oldest first; only those of the given statuses when `statuses` is set. */
  list(userId: string, options?: { statuses?: readonly FactStatus[] }): Promise<ProfileFact[]>;
  get(userId: string, factId: string): Promise<ProfileFact | undefined>;
  /** Creates or replaces the fact (same id: same item). */
  put(fact: ProfileFact): Promise<void>;
  /** Removes one fact; false when there was none. */
  delete(userId: string, factId: string): Promise<boolean>;
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
