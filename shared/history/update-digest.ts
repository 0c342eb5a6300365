// The history worker's digest step: keeps the rolling digest standing for the path of the newest turn, folding the
// oldest unfolded turns of that path into its summary past half the prompt budget, written conditionally.
import { sameGaps } from '../conversation/branch-path.js';
import type { MessageCompleted } from '../conversation/message-completed.js';
import type { OrdinalGap } from '../conversation/branches.js';
import type { Logger } from '../logger.js';
import type { WorkingMemoryStore } from '../conversation/working-memory-store.js';
import {
  PROMPT_EXCHANGE_LINES,
  type ConversationHeader,
  type ExchangeEntry,
  type SessionDigest,
} from './contracts.js';
import {
  checkpointOf,
  digestStandsFor,
  foldIsDue,
  rebasedDigest,
  turnsToFold,
  unfoldedTokens,
} from './digest.js';
import { fold, oldestUnfoldedTurns, pathTurnsSince, type DigestServices } from './fold-turns.js';

/** Conditional digest writes tried before giving up (the event is then redelivered). */
const DIGEST_ATTEMPTS = 3;

/** What the digest's bookkeeping needs of the turn being persisted. */
export interface ThisTurn {
  /** The ordinal of its first message: a fold reads and takes only what lies below. */
  firstOrdinal: number;
  upTo: number;
  /** Its size in the prompt (turnTokens), which the header counts once the turn is recorded. */
  tokens: number;
  /** Its path: the gaps of its branch (none on the main line, and for turns committed before branches existed). */
  gaps: readonly OrdinalGap[];
}

/** One digest update: the turn being persisted, the header read when it began, and its time. */
export interface DigestUpdate {
  /**
   * With working memory, where each digest revision is marked before it is written: a digest written unmarked would
   * leave a process holding the previous one taking it for the newest.
   */
  services: DigestServices & { workingMemory: Pick<WorkingMemoryStore, 'announceDigest'> };
  event: MessageCompleted;
  header: ConversationHeader;
  turn: ThisTurn;
  at: string;
  log: Pick<Logger, 'warn'>;
}

/**
 * Keeps the digest standing for the path of the newest turn, and folds the oldest unfolded turns of that path into
 * the summary when they pass half the prompt budget. The digest is written only then, or when the turn is on
 * another path than the digest's (an edit, a regenerate, a switch between branches): a turn that continues the
 * path without folding costs one conditional read of it (mostly unchanged) and no write. The write is conditional,
 * redone from a fresh read on a conflict. The decision rests on the header read at the start (only this worker
 * changes its counts, one turn at a time) and the digest, so a redelivered turn whose fold is done finds the
 * digest's count advanced (and its path already this turn's) and does nothing more.
 */
export async function updateDigest(update: DigestUpdate): Promise<void> {
  const { services, event, header, turn } = update;
  const { userId, sessionId } = event;
  // An older turn replayed after later ones (from the dead-letter queue): the digest has moved on with them, maybe
  // onto another path, and this turn must not move it back.
  if (header.persistedCount >= turn.upTo) return;
  // A conversation that never branched has one path, so a digest of it stands for this turn's; and when all its
  // text is under the fold's threshold, a digest could only lower what is unfolded: there is nothing to read.
  if (
    header.branched !== true &&
    turn.gaps.length === 0 &&
    !foldIsDue(unfoldedTokens(header, turn, undefined), services.settings.promptTokenBudget)
  )
    return;
  for (let attempt = 1; ; attempt++) {
    const stored = await services.sessionMemory.getDigest(userId, sessionId);
    const digest = stored?.digest;
    const next = sameGaps(digest?.gaps ?? [], turn.gaps)
      ? await foldAlongPath(update, digest)
      : await rebaseOnPath(update, digest);
    if (next === undefined) return;
    // The checkpoint before the digest: a digest whose checkpoint failed is not written, so the redelivered turn
    // does its fold again and writes both (a checkpoint already there stays, summarising the same messages).
    const checkpoint = checkpointOf(next, update.at);
    if (checkpoint) await services.sessionMemory.putCheckpoint(userId, sessionId, checkpoint);
    // The revision is marked in working memory before the digest is written, so a round never takes a digest it
    // holds for the newest once a newer one may be stored; a job that dies between the two leaves rounds reading it.
    const revision = (digest?.revision ?? 0) + 1;
    await services.workingMemory.announceDigest(userId, sessionId, revision);
    const written = await services.sessionMemory.putDigest(
      userId,
      sessionId,
      { ...next, revision },
      stored?.version,
    );
    if (written === 'written') return;
    if (attempt >= DIGEST_ATTEMPTS)
      throw new Error(
        `The digest of session ${sessionId} changed under ${DIGEST_ATTEMPTS} writes in a row; ` +
          'the event will be delivered again.',
      );
  }
}

/**
 * The turn continues the digest's path: the unfolded part of the path is the header's count less the digest's,
 * and when it passes half the budget the oldest unfolded turns of the path are folded. Undefined: nothing to write.
 */
async function foldAlongPath(
  { services, event, header, turn, at, log }: DigestUpdate,
  digest: SessionDigest | undefined,
): Promise<SessionDigest | undefined> {
  const unfolded = unfoldedTokens(header, turn, digest);
  if (!foldIsDue(unfolded, services.settings.promptTokenBudget)) return undefined;
  const folding = await oldestUnfoldedTurns(services, event, digest?.summarizedThrough ?? 0, {
    tokens: unfolded,
    before: turn.firstOrdinal,
    gaps: turn.gaps,
  });
  return fold(services, event, digest, folding, at, log);
}

/**
 * The turn is on another path than the digest's. The digest is rebased on the turn's path, from the newest of: the
 * digest itself when it stands for that path (what it folded is on it), the newest checkpoint on the path, or
 * nothing folded. Then the path's turns since that point are read, newest first, to count what is unfolded (the
 * header's count also holds other branches' turns, so it cannot tell) and fold when due. A checkpoint is written at
 * every fold of every path, so the path's newest one is at most about half a budget behind the path's newest turn
 * (folds keep what is unfolded under that): the reading is bounded by the budget, never by the conversation. When
 * a path has no checkpoint close enough (folded before checkpoints existed, or many folds failed in a row), the
 * reading stops after a budget's worth of turns, and the summary starts again above them (logged).
 */
async function rebaseOnPath(
  { services, event, header, turn, at, log }: DigestUpdate,
  digest: SessionDigest | undefined,
): Promise<SessionDigest | undefined> {
  const { userId, sessionId } = event;
  const path = { skip: turn.gaps };
  let base: { summary: string; summarizedThrough: number; recentExchanges?: ExchangeEntry[] } = {
    summary: '',
    summarizedThrough: 0,
    recentExchanges: [],
  };
  if (digest !== undefined && digestStandsFor(digest, turn.gaps)) base = digest;
  else if (digest !== undefined) {
    // The digest is left for another path: its checkpoint (there is one already unless it was folded before
    // checkpoints existed) keeps its summary for when a turn comes back to that path.
    const left = checkpointOf(digest, at);
    if (left) await services.sessionMemory.putCheckpoint(userId, sessionId, left);
  }
  const checkpoint = await services.sessionMemory.latestCheckpoint(userId, sessionId, {
    before: turn.firstOrdinal,
    ...path,
  });
  if (checkpoint !== undefined && checkpoint.summarizedThrough > base.summarizedThrough)
    base = { summary: checkpoint.summary, summarizedThrough: checkpoint.summarizedThrough };

  const read = await pathTurnsSince(services, event, turn, base.summarizedThrough);
  if (read.cutAt !== undefined) {
    log.warn(
      `History: the path of turn ${event.chatMessageId} of session ${sessionId} has more than a prompt budget ` +
        `of turns after its last summary (ordinal ${base.summarizedThrough}); its summary starts again at ` +
        `ordinal ${read.cutAt}, and the turns before are reached by the past-answer tools only.`,
    );
    base = { summary: '', summarizedThrough: read.cutAt };
  }
  const recentExchanges =
    base.recentExchanges ??
    (base.summarizedThrough === 0
      ? []
      : await services.sessionMemory.pathExchanges(userId, sessionId, {
          before: base.summarizedThrough,
          limit: PROMPT_EXCHANGE_LINES,
          ...path,
        }));
  const unfolded = read.turns.reduce((sum, one) => sum + one.tokens, 0) + turn.tokens;
  const rebased = rebasedDigest({
    base: { ...base, recentExchanges },
    gaps: turn.gaps,
    headerTokens: header.textTokens + (header.persistedCount < turn.upTo ? turn.tokens : 0),
    unfolded,
    at,
  });
  if (!foldIsDue(unfolded, services.settings.promptTokenBudget)) return rebased;
  const { fold: folding } = turnsToFold(read.turns, unfolded, services.settings.promptTokenBudget);
  // A fold the model cannot make now leaves the rebased digest (the path is still right): the next turn folds.
  return (await fold(services, event, rebased, folding, at, log)) ?? rebased;
}
