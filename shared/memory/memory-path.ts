// Long-term memory along a conversation's branches: memory is consolidated from the path the user keeps. A turn on
// another path first makes the profile follow it and rebuilds the summary; the work is bounded by what the moved
// turns changed, never by the length of the conversation.
import { inGaps, sameGaps } from '../conversation/branch-path.js';
import type { OrdinalGap } from '../conversation/branches.js';
import type { TurnRef } from '../conversation/messages.js';
import { applyRecord, withdrawRecord } from './apply-changes.js';
import type { ConversationSummaryDocument, SummarySnapshot } from './contracts.js';
import type { ProfileFacts } from './profile-facts.js';

/** Where a turn is in its conversation's tree, as the memory worker reads it from its messages. */
export interface TurnPath {
  /**
   * The turn it follows: null when it opens the conversation (or, with gaps, an edit of the first message), undefined
   * when its event was announced before branches existed (a main-line turn following the one before).
   */
  parent: string | null | undefined;
  gaps: readonly OrdinalGap[];
  /** The ordinal of its user message: every turn on its path before it is below. */
  firstOrdinal: number;
}

/**
 * Whether memory already follows the turn's path: the summary was written on the same gaps, up to a turn on this
 * path (its parent, an earlier turn when the turns between were left out of memory: failed, or use_memory false, or
 * the turn itself: a redelivery). Every ordinal below the turn's that its gaps do not skip is on its path, so the
 * profile holds that path's turns, and the summary goes on as it is.
 */
export function followsPath(
  summary: Pick<ConversationSummaryDocument, 'chatMessageId' | 'gaps' | 'coveredThrough'> | undefined,
  chatMessageId: string,
  path: TurnPath,
): boolean {
  if (!sameGaps(summary?.gaps ?? [], path.gaps)) return false;
  if (path.parent === undefined) return true;
  if (summary === undefined) return path.parent === null;
  if (summary.chatMessageId === path.parent || summary.chatMessageId === chatMessageId) return true;
  return summary.coveredThrough < path.firstOrdinal && !inGaps(summary.coveredThrough, path.gaps);
}

/** Whether a message with this ordinal is on the path memory follows (for an older turn replayed late). */
export function onFollowedPath(summary: Pick<ConversationSummaryDocument, 'gaps'>, ordinal: number): boolean {
  return !inGaps(ordinal, summary.gaps ?? []);
}

export interface PathMove {
  /** Turns whose changes were withdrawn: their path is no longer the conversation's. */
  withdrawn: number;
  /** Turns whose changes were applied again: the conversation is back on their path. */
  restored: number;
}

/**
 * Makes the profile hold the turns of the path and no other of the conversation's: withdraws the changes of the
 * turns in the path's gaps that are not withdrawn yet (newest first, so a change is taken back before the one it
 * built on), then applies again those of the withdrawn turns on the path (oldest first, as they were said). Each
 * record is marked after its changes, and each step is idempotent, so a run cut short is finished by the next.
 */
export async function followPath(
  facts: ProfileFacts,
  ref: Pick<TurnRef, 'userId' | 'sessionId'>,
  path: TurnPath,
  at: string,
): Promise<PathMove> {
  const { userId, sessionId } = ref;
  const leaving =
    path.gaps.length === 0
      ? []
      : await facts.findConsolidations(userId, sessionId, {
          before: path.firstOrdinal,
          within: path.gaps,
          withdrawn: false,
          changed: true,
          order: 'desc',
        });
  for (const record of leaving) {
    await withdrawRecord(facts, record, at);
    await facts.markWithdrawn(userId, record.id, at);
  }
  const returning = await facts.findConsolidations(userId, sessionId, {
    before: path.firstOrdinal,
    outside: path.gaps,
    withdrawn: true,
    order: 'asc',
  });
  for (const record of returning) {
    await applyRecord(facts, record);
    await facts.markWithdrawn(userId, record.id, undefined);
  }
  return { withdrawn: leaving.length, restored: returning.length };
}

/**
 * The summary a turn on a newly followed path starts from: the newer of the stored summary, if its newest turn is on
 * the path (the path to a turn is unique, so it summarises just that path), and the one kept after the newest
 * consolidated turn of the path. Nothing before a conversation's first turn (or an edit of it). `unsure` when
 * neither exists though the path has turns: they were consolidated before summaries were kept per turn, and the
 * stored summary (which may still speak of the turns the path left) stands in rather than losing them all.
 */
export async function summaryBase(
  facts: ProfileFacts,
  ref: Pick<TurnRef, 'userId' | 'sessionId'>,
  path: TurnPath,
  stored: ConversationSummaryDocument | undefined,
): Promise<{ base?: SummarySnapshot; unsure?: true }> {
  if (path.parent === null) return {};
  const storedOnPath =
    stored !== undefined &&
    stored.coveredThrough < path.firstOrdinal &&
    !inGaps(stored.coveredThrough, path.gaps);
  const [record] = await facts.findConsolidations(ref.userId, ref.sessionId, {
    before: path.firstOrdinal,
    outside: path.gaps,
    summarised: true,
    order: 'desc',
    limit: 1,
  });
  const kept = record?.summaryAfter;
  if (kept !== undefined && !(storedOnPath && stored.coveredThrough > (record?.source.ordinal ?? 0)))
    return { base: kept };
  if (stored !== undefined && storedOnPath) return { base: snapshotOf(stored) };
  return stored === undefined ? {} : { base: snapshotOf(stored), unsure: true };
}

/** What a consolidation record keeps of a summary. */
export function snapshotOf(summary: ConversationSummaryDocument): SummarySnapshot {
  const { summary: text, themes, persons, places, user_sentiment, exchanges } = summary;
  return { summary: text, themes, persons, places, user_sentiment, exchanges };
}

/**
 * Whether a turn's consolidation record may exist, so its consolidation looks for it: on a delivery after the first,
 * or when the summary has the turn already (a replay). A first delivery has none; should it meet one anyway (a
 * replay from the dead-letter queue), the record stored first wins when the new one is written.
 */
export function mayBeConsolidated(
  summary: Pick<ConversationSummaryDocument, 'coveredThrough' | 'chatMessageId'> | undefined,
  turn: Pick<TurnRef, 'chatMessageId'>,
  lastOrdinal: number,
  delivery: { deliveryCount: number },
): boolean {
  if (delivery.deliveryCount > 1) return true;
  return (
    summary !== undefined &&
    (summary.coveredThrough >= lastOrdinal || summary.chatMessageId === turn.chatMessageId)
  );
}
