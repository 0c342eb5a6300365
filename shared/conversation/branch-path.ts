// Pure rules of a conversation's branches (contracts.ts "Branches"): whether an ordinal is on a path, the branch
// of a turn that continues a path or forks from it, and which ordinals two paths do not share. No I/O: working
// memory, history and memory all decide with these.
import { MAIN_BRANCH, MAX_PATH_GAPS, type OrdinalGap, type TurnBranch, type TurnFork } from './branches.js';
import type { ConversationMessage } from './messages.js';
import { ConflictError } from '../errors.js';

/** The branch of a turn committed before branches existed: the main line, nothing skipped. */
export function branchOf(
  message: Pick<ConversationMessage, 'branch'>,
  parentChatMessageId: string | null,
): TurnBranch {
  return message.branch ?? { parentChatMessageId, branchId: MAIN_BRANCH, gaps: [] };
}

/** Whether `ordinal` lies in one of the gaps (so is not on the path they describe). */
export function inGaps(ordinal: number, gaps: readonly OrdinalGap[]): boolean {
  return gaps.some((gap) => ordinal >= gap.from && ordinal < gap.to);
}

/** Whether a message with this ordinal is on the path of a turn with `branch` whose messages end at `lastOrdinal`. */
export function onPath(ordinal: number, branch: Pick<TurnBranch, 'gaps'>, lastOrdinal: number): boolean {
  return ordinal <= lastOrdinal && !inGaps(ordinal, branch.gaps);
}

/**
 * The gaps of a path that follows a turn ending at `lastOrdinal` (whose own path has `gaps`; -1 for no turn) and
 * whose next turn's first message takes `firstOrdinal`: every ordinal committed in between belongs to other
 * branches, so it is one more gap (merged with one that ends where it starts). A plain continuation of the
 * conversation's newest turn adds none; a fork, or a continuation after a switch back to an older branch, skips
 * what the other branches committed meanwhile.
 */
export function gapsAfter(
  gaps: readonly OrdinalGap[],
  lastOrdinal: number,
  firstOrdinal: number,
): OrdinalGap[] {
  const from = lastOrdinal + 1;
  if (firstOrdinal <= from) return gaps.filter((gap) => gap.to <= from);
  const kept = gaps.filter((gap) => gap.to < from);
  const touching = gaps.find((gap) => gap.to === from);
  const next = [...kept, { from: touching?.from ?? from, to: firstOrdinal }];
  if (next.length > MAX_PATH_GAPS)
    throw new ConflictError(
      `This branch already skips ${MAX_PATH_GAPS} ranges of other branches: continue another branch, or start a new conversation.`,
    );
  return next;
}

/**
 * The branch of a turn that replaces `replaced` (an edit or a regenerate). It follows the replaced turn's parent:
 * `parent` is that turn's branch and `parentLastOrdinal` the ordinal of its last message (both absent when the
 * replaced turn opened the conversation). Every ordinal after the parent and before `firstOrdinal`, the new turn's
 * first, is off the new path; gaps the parent's path had are kept, and a new gap swallows any it reaches.
 */
export function forkBranch(options: {
  fork: TurnFork;
  newChatMessageId: string;
  replaced: TurnBranch;
  parent?: { branch: TurnBranch; lastOrdinal: number } | undefined;
  firstOrdinal: number;
}): TurnBranch {
  const { fork, newChatMessageId, replaced, parent, firstOrdinal } = options;
  const gaps = gapsAfter(parent?.branch.gaps ?? [], parent?.lastOrdinal ?? -1, firstOrdinal);
  return {
    parentChatMessageId: replaced.parentChatMessageId,
    branchId: newChatMessageId,
    alternativeOf: replaced.alternativeOf ?? fork.replaces,
    origin: fork.origin,
    gaps,
  };
}

/**
 * The ordinals below `through` that are on the path of `before` but not on the path of `after`: the ranges a
 * move from one path to the other leaves (both paths described by their gaps, both read up to `through`).
 */
export function leftRanges(
  before: readonly OrdinalGap[],
  after: readonly OrdinalGap[],
  through: number,
): OrdinalGap[] {
  const left: OrdinalGap[] = [];
  for (const gap of after) {
    let from = gap.from;
    const to = Math.min(gap.to, through);
    // Split the new gap around the old gaps inside it: only what the old path had is left.
    for (const old of [...before].sort((a, b) => a.from - b.from)) {
      if (old.to <= from || old.from >= to) continue;
      if (old.from > from) left.push({ from, to: old.from });
      from = Math.max(from, old.to);
    }
    if (from < to) left.push({ from, to });
  }
  return left;
}

/** Whether two descriptions of a path are the same path. */
export function sameGaps(a: readonly OrdinalGap[], b: readonly OrdinalGap[]): boolean {
  return (
    a.length === b.length && a.every((gap, index) => gap.from === b[index]?.from && gap.to === b[index]?.to)
  );
}
