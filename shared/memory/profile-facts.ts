// The port of the user's profile (container `profile-facts`, partition userId): one item per fact, and one record
// per consolidated turn of the changes it made. Fact writes are conditioned on the version read, since two
// conversations' turns and forgetting run at once. Adapter: adapters/cosmos-profile-facts.ts.
import type { OrdinalGap } from '../conversation/branches.js';
import type { MemoryScope } from '../conversation/memory-scope.js';
import type {
  ConsolidationRecord,
  FactStatus,
  ProfileChange,
  ProfileFact,
  SummarySnapshot,
} from './contracts.js';

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

/**
 * Which of a conversation's consolidation records to find, by the ordinal of their user message (records written
 * before branches existed have none, and are never found). Each is one query over the conversation's records.
 */
export interface ConsolidationQuery {
  /** Only records below this ordinal. */
  before: number;
  /** Only those in one of these ranges. */
  within?: readonly OrdinalGap[];
  /** Only those in none of these ranges (a path's gaps: the records on that path). */
  outside?: readonly OrdinalGap[];
  /** Only those withdrawn (true) or not (false). */
  withdrawn?: boolean;
  /** Only those that changed something. */
  changed?: boolean;
  /** Only those that kept the summary after them. */
  summarised?: boolean;
  /** By ordinal. */
  order: 'asc' | 'desc';
  limit?: number;
}

export interface ProfileFacts {
  /**
   * The user's facts, oldest first; only those of the given statuses when `statuses` is set, and of the given scopes
   * when `scopes` is (one single-partition query whatever they are).
   */
  list(
    userId: string,
    options?: { statuses?: readonly FactStatus[]; scopes?: readonly MemoryScope[] },
  ): Promise<ProfileFact[]>;
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
  /**
   * What a turn's consolidation starts from, in one request: the turn's record, if one was written, and the user's
   * active facts, oldest first.
   */
  consolidationStart(
    userId: string,
    sessionId: string,
    chatMessageId: string,
  ): Promise<{ record: ConsolidationRecord | undefined; active: ProfileFact[] }>;
  /** Writes the record unless one exists; returns the one stored (the earlier one wins). */
  createConsolidation(record: ConsolidationRecord): Promise<ConsolidationRecord>;
  /** Marks the record applied, with the conversation's summary after its turn when there is one. */
  markApplied(
    userId: string,
    recordId: string,
    appliedAt: string,
    summaryAfter?: SummarySnapshot,
  ): Promise<void>;
  /** Marks the record withdrawn (at a time) or applied again (undefined). A record deleted meanwhile stays deleted. */
  markWithdrawn(userId: string, recordId: string, withdrawnAt: string | undefined): Promise<void>;
  /** The session's records the query selects. */
  findConsolidations(
    userId: string,
    sessionId: string,
    query: ConsolidationQuery,
  ): Promise<ConsolidationRecord[]>;
  /** The user's records (of any session) with a change that names the fact. */
  consolidationsChanging(userId: string, factId: string): Promise<ConsolidationRecord[]>;
  /** Rewrites a record's changes (a fact forgotten leaves them). A record deleted meanwhile stays deleted. */
  setChanges(userId: string, recordId: string, changes: readonly ProfileChange[]): Promise<void>;
  /** Removes the session's consolidation records; returns how many. */
  deleteConsolidations(userId: string, sessionId: string): Promise<number>;
  /** Removes every fact and record of the user; returns how many items. */
  deleteAll(userId: string): Promise<number>;
}
