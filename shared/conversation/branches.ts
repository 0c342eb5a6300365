// The conversation's tree of turns: branches, forks and the active path, as every area that reads or writes
// messages names them. The path rule over these shapes is branch-path.ts and active-path.ts.
import { z } from 'zod';

// A conversation is a tree of turns: regenerating an answer or editing a user message starts a new turn beside
// the one it replaces (an alternative), and the conversation branches there. Ordinals stay the conversation's
// commit order (every committed message takes the next one, whatever its branch), so a child always has higher
// ordinals than its parent, and a branch's path is every ordinal up to its newest turn except a few ranges: its
// gaps, one per place where the path jumps over turns of other branches. A path is described by its gaps, whose
// number grows with the forks on it, never with the conversation's length.

/** The branch a conversation begins on. */
export const MAIN_BRANCH = 'main';

/** Forks one path may cross; a later edit or regenerate on a path with this many is refused (409). */
export const MAX_PATH_GAPS = 64;

/** Ordinals `from` ≤ o < `to` that are not on a path. */
export const ordinalGapSchema = z.object({
  from: z.number().int().nonnegative(),
  to: z.number().int().nonnegative(),
});
export type OrdinalGap = z.infer<typeof ordinalGapSchema>;

/**
 * Where a turn sits in its conversation's tree. Carried by both messages of every turn committed since branches
 * exist; a message without it is on the main branch and follows the turn before it, with no gaps.
 */
export const turnBranchSchema = z.object({
  /** The turn this one follows on its path; null for a conversation's first turn. */
  parentChatMessageId: z.string().nullable(),
  /** MAIN_BRANCH, or the chatMessageId of the edit or regenerate that started the branch; a continuation keeps its parent's. */
  branchId: z.string(),
  /** Set on an edit or regenerate: the first turn of the group of alternatives it belongs to (the one first replaced). */
  alternativeOf: z.string().optional(),
  origin: z.enum(['edit', 'regenerate']).optional(),
  /** Ordinal ranges below this turn's that are not on its path, in ascending order, none touching another. */
  gaps: z.array(ordinalGapSchema).max(MAX_PATH_GAPS),
});
export type TurnBranch = z.infer<typeof turnBranchSchema>;

/**
 * What a posted message replaces: `editOf` in POST /api/chat (origin edit, the user's new text) or
 * POST .../{chatMessageId}/regenerate (origin regenerate, the same text). The new turn follows the replaced turn's
 * parent, and the conversation continues on the new branch.
 */
export const turnForkSchema = z.object({
  replaces: z.string(),
  origin: z.enum(['edit', 'regenerate']),
});
export type TurnFork = z.infer<typeof turnForkSchema>;

/** The path a conversation is on: its newest turn, and that turn's branch (its gaps describe the path). */
export const activePathSchema = z.object({
  leafChatMessageId: z.string(),
  branch: turnBranchSchema,
  /**
   * The ordinal of the leaf's last message: the path is every ordinal up to it outside the gaps. Absent on paths
   * written before it was kept; then the window's newest message (the leaf's) gives it.
   */
  lastOrdinal: z.number().int().nonnegative().optional(),
});
export type ActivePath = z.infer<typeof activePathSchema>;
