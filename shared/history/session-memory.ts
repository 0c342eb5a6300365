// The port of a conversation's memory beyond the prompt, beside its messages: each exchange's index entry, the
// rolling digest and its checkpoints (one per fold, to rebase on another path). The history worker writes them; a
// turn's prompt reads the digest, the past-answer tools the entries. Adapter: adapters/cosmos-session-memory.ts.
import type { OrdinalGap } from '../conversation/branches.js';
import type { DigestCheckpoint, ExchangeEntry, SessionDigest } from './contracts.js';

export interface StoredDigest {
  digest: SessionDigest;
  /** Opaque version a later write is conditioned on. */
  version: string;
}

export interface SessionMemory {
  /** Stores an exchange's entry (a second put of the same exchange replaces it). */
  putExchange(userId: string, sessionId: string, entry: ExchangeEntry): Promise<void>;
  getExchange(userId: string, sessionId: string, exchangeId: string): Promise<ExchangeEntry | undefined>;
  /**
   * The conversation's entries about `topic` (case-insensitive: a tag equal to it, or its words in the line),
   * newest first, at most `limit`; with `path`, only the entries of that path (ordinals in `skip` are other
   * branches').
   */
  findExchanges(
    userId: string,
    sessionId: string,
    topic: string,
    limit: number,
    path?: { skip: readonly OrdinalGap[] },
  ): Promise<ExchangeEntry[]>;
  /**
   * The newest entries of one path below `before` (ordinals in `skip` are other branches'), newest first, at most
   * `limit`: one bounded query, for the lines of a digest rebased on that path.
   */
  pathExchanges(
    userId: string,
    sessionId: string,
    path: { before: number; skip: readonly OrdinalGap[]; limit: number },
  ): Promise<ExchangeEntry[]>;
  /**
   * The digest; cheap when unchanged since this process last read it (a conditional read), and no read at all when
   * the process holds the digest of `known.revision` (the revision working memory says was written last).
   */
  getDigest(
    userId: string,
    sessionId: string,
    known?: { revision: number | undefined },
  ): Promise<StoredDigest | undefined>;
  /**
   * Writes the digest if it is still at `version` (undefined: only if there is none yet); 'conflict' otherwise.
   */
  putDigest(
    userId: string,
    sessionId: string,
    digest: SessionDigest,
    version: string | undefined,
  ): Promise<'written' | 'conflict'>;
  /** Stores a checkpoint unless one with its `summarizedThrough` exists (that one stays). */
  putCheckpoint(userId: string, sessionId: string, checkpoint: DigestCheckpoint): Promise<void>;
  /**
   * The checkpoint with the highest `summarizedThrough` at or below `before` whose last folded message is on the
   * path (its `lastOrdinal` is in none of `skip`): one bounded query.
   */
  latestCheckpoint(
    userId: string,
    sessionId: string,
    path: { before: number; skip: readonly OrdinalGap[] },
  ): Promise<DigestCheckpoint | undefined>;
}
