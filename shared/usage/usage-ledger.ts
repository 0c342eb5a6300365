// The port to where model calls are recorded and counted (the `usage` container in Cosmos DB).
import type { CounterType, UsageCounter, UsageFigures, UsageRecord } from './contracts.js';

export interface UsageLedger {
  /**
   * Stores a job's record (its calls, and any another job handed it, each job under its name), or folds its jobs
   * into the record of that id stored already (another job of the same turn), and adds their calls to the user's
   * counters of its day, its month and its conversation, once and all together: false (and nothing added) when the
   * stored record holds one of its jobs already. A record of a conversation detached before (deleted) is stored and
   * counted without it. `first` is the write tried first: `fold` for a job that usually ends after another job of
   * the turn stored its record (a wrong guess costs one more request).
   */
  record(record: UsageRecord, first?: 'create' | 'fold'): Promise<boolean>;
  /** One counter; undefined before its first call. */
  counter(userId: string, type: CounterType, key: string): Promise<UsageCounter | undefined>;
  /** The conversation counters of these sessions (one request). */
  conversations(userId: string, sessionIds: readonly string[]): Promise<UsageCounter[]>;
  /** The user's records of the UTC days from `fromDay` to `toDay`, both included. */
  records(userId: string, fromDay: string, toDay: string): Promise<UsageRecord[]>;
  /**
   * A deleted conversation's spend stays in the user's totals, no longer tied to it: its records lose the
   * conversation and turn, its counter goes, and calls recorded later are not tied to it. Returns how many records
   * it detached.
   */
  detachConversation(userId: string, sessionId: string): Promise<number>;
  /** The user's totals over every month counted. */
  lifetime(userId: string): Promise<{ turns: UsageFigures; background: UsageFigures }>;
}
