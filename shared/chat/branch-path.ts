// Pure rules of a conversation's branches (contracts.ts "Branches"): whether an ordinal is on a path, the branch
// of a turn that continues a path or forks from it, and which ordinals two paths do not share. No I/O: working
// memory, history and memory all decide with these.
import {
  MAIN_BRANCH,
  MAX_PATH_GAPS,
  type ConversationMessage,
  type OrdinalGap,
  type TurnBranch,
  type TurnFork,
} from './contracts.js';
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

/** A turn that continues `parent` (the path's newest turn) keeps its branch and gaps. */
export function continuationBranch(parentChatMessageId: string, parent: TurnBranch): TurnBranch {
  return { parentChatMessageId, branchId: parent.branchId, gaps: parent.gaps };
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
  parent?: { branch: TurnBranch; lastOrdinal: number };
  firstOrdinal: number;
}): TurnBranch {
  const { fork, newChatMessageId, replaced, parent, firstOrdinal } = options;
  const from = parent === undefined ? 0 : parent.lastOrdinal + 1;
  const kept = (parent?.branch.gaps ?? []).filter((gap) => gap.to < from);
  const touching = (parent?.branch.gaps ?? []).find((gap) => gap.to === from);
  const gaps = touching
    ? [...kept, { from: touching.from, to: firstOrdinal }]
    : [...kept, { from, to: firstOrdinal }];
  const nonEmpty = gaps.filter((gap) => gap.to > gap.from);
  if (nonEmpty.length > MAX_PATH_GAPS)
    throw new ConflictError(
      `This conversation's path already branches ${MAX_PATH_GAPS} times: continue it, or start a new conversation.`,
    );
  return {
    parentChatMessageId: replaced.parentChatMessageId,
    branchId: newChatMessageId,
    alternativeOf: replaced.alternativeOf ?? fork.replaces,
    origin: fork.origin,
    gaps: nonEmpty,
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
