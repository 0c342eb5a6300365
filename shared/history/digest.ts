// Pure bookkeeping of a conversation's rolling digest: how much history is not folded yet, when to fold and which
// stored turns, the digest after a fold; and, a digest standing for one branch path, which paths it serves, its
// checkpoint and the digest rebased on another path. No I/O: update-digest.ts reads and writes it.
import { leftRanges } from '../conversation/branch-path.js';
import type { OrdinalGap } from '../conversation/branches.js';
import { messageTokens } from '../conversation/tokens.js';
import {
  PROMPT_EXCHANGE_LINES,
  type DigestCheckpoint,
  type ExchangeEntry,
  type SessionDigest,
} from './contracts.js';

/**
 * A turn's size in the prompt: its user and assistant text, counted as prompt.ts counts history (a message without
 * text is not replayed, and tool traffic never is).
 */
export function turnTokens(messages: readonly { content: string }[]): number {
  return messages
    .filter((message) => message.content !== '')
    .reduce((sum, message) => sum + messageTokens(message), 0);
}

/**
 * The prompt tokens of the persisted history of the digest's path not in the summary: every persisted turn's (the
 * header's count, plus this turn's while the header does not count it yet) less the digest's (the folded turns',
 * and other branches' turns as of the digest's last rebase: rebasedDigest). Two numbers, so the decision costs the
 * same at turn 1 and turn 500; a redelivered turn is counted once (the header counts it once it is recorded), and
 * a turn whose fold already happened finds the digest's count advanced. Valid for a turn that continues the
 * digest's path; a turn on another path has the digest rebased first.
 */
export function unfoldedTokens(
  header: { textTokens: number; persistedCount: number },
  turn: { upTo: number; tokens: number },
  digest: Pick<SessionDigest, 'summarizedTokens'> | undefined,
): number {
  const counted = header.persistedCount < turn.upTo ? turn.tokens : 0;
  return header.textTokens + counted - (digest?.summarizedTokens ?? 0);
}

/**
 * Whether to fold: once the unfolded history passes half the prompt budget. Folding then goes down to a quarter
 * (turnsToFold), so a fold (one page read or two and one model call) happens every few turns, not every turn.
 */
export function foldIsDue(unfolded: number, promptTokenBudget: number): boolean {
  return unfolded > promptTokenBudget / 2;
}

/** A turn as stored: its messages (ordered by ordinal), their ordinal span, and its size in the prompt. */
export interface StoredTurn<M> {
  chatMessageId: string;
  messages: M[];
  fromOrdinal: number;
  toOrdinal: number;
  tokens: number;
}

/** Stored messages (ascending ordinals) grouped into turns: consecutive messages sharing a chatMessageId. */
export function groupTurns<M extends { chatMessageId: string; ordinal: number; content: string }>(
  messages: readonly M[],
): StoredTurn<M>[] {
  const turns: StoredTurn<M>[] = [];
  for (const message of messages) {
    const last = turns.at(-1);
    if (last?.chatMessageId === message.chatMessageId) {
      last.messages.push(message);
      last.toOrdinal = message.ordinal;
    } else {
      turns.push({
        chatMessageId: message.chatMessageId,
        messages: [message],
        fromOrdinal: message.ordinal,
        toOrdinal: message.ordinal,
        tokens: 0,
      });
    }
  }
  for (const turn of turns) turn.tokens = turnTokens(turn.messages);
  return turns;
}

/**
 * The oldest turns to fold, from the unfolded turns read so far (oldest first, each whole, the current turn never
 * among them: the next question most often refers to it, and the prompt fits it to the budget by itself): taken
 * until the rest of the unfolded history is at most a quarter of the budget. `enough` once that point is reached,
 * so the worker reads no further; without it, every turn given is to be folded and more may be read.
 */
export function turnsToFold<T extends { tokens: number }>(
  turns: readonly T[],
  unfolded: number,
  promptTokenBudget: number,
): { fold: T[]; enough: boolean } {
  const target = promptTokenBudget / 4;
  let remaining = unfolded;
  const fold: T[] = [];
  for (const turn of turns) {
    if (remaining <= target) break;
    fold.push(turn);
    remaining -= turn.tokens;
  }
  return { fold, enough: remaining <= target };
}

/**
 * The digest once the folded turns (oldest first) are in `summary`: the summary covers every message up to the
 * last folded one, their tokens join `summarizedTokens`, and the folded exchanges' index lines join the newest
 * (PROMPT_EXCHANGE_LINES kept).
 */
export function foldedDigest(
  digest: SessionDigest | undefined,
  fold: {
    turns: readonly { toOrdinal: number; tokens: number }[];
    summary: string;
    lines: readonly ExchangeEntry[];
  },
  at: string,
): SessionDigest {
  const lineIds = new Set(fold.lines.map((line) => line.exchangeId));
  const through = Math.max(digest?.summarizedThrough ?? 0, ...fold.turns.map((turn) => turn.toOrdinal + 1));
  const recentExchanges = [
    ...(digest?.recentExchanges ?? []).filter((entry) => !lineIds.has(entry.exchangeId)),
    ...[...fold.lines].sort((a, b) => a.ordinal - b.ordinal),
  ].slice(-PROMPT_EXCHANGE_LINES);
  return {
    summary: fold.summary,
    summarizedThrough: through,
    summarizedTokens:
      (digest?.summarizedTokens ?? 0) + fold.turns.reduce((sum, turn) => sum + turn.tokens, 0),
    recentExchanges,
    updatedAt: at,
    gaps: digest?.gaps ?? [],
  };
}

/**
 * Whether the digest stands for the path with `gaps`: what it folded (its path's messages below
 * `summarizedThrough`) is exactly that path's messages below the same point. Then its summary and lines belong in
 * the prompt of a turn on that path, also when the two paths part above it (an edit or regenerate of a turn it has
 * not folded); otherwise they speak of turns that path does not have, and stay out of its prompt until the history
 * worker rebases the digest.
 */
export function digestStandsFor(
  digest: Pick<SessionDigest, 'summarizedThrough' | 'gaps'>,
  gaps: readonly OrdinalGap[],
): boolean {
  const through = digest.summarizedThrough;
  return (
    through === 0 ||
    (leftRanges(digest.gaps, gaps, through).length === 0 &&
      leftRanges(gaps, digest.gaps, through).length === 0)
  );
}

/** The checkpoint of a digest: its summary and the part of its path it covers. Undefined when it folded nothing. */
export function checkpointOf(digest: SessionDigest, at: string): DigestCheckpoint | undefined {
  const through = digest.summarizedThrough;
  if (through === 0) return undefined;
  return {
    summary: digest.summary,
    summarizedThrough: through,
    lastOrdinal: through - 1,
    gaps: digest.gaps
      .filter((gap) => gap.from < through)
      .map((gap) => ({ from: gap.from, to: Math.min(gap.to, through) })),
    createdAt: at,
  };
}

/**
 * The digest of a path rebased on `base` (the stored digest when it stands for the path, a checkpoint on it, or
 * nothing folded), with the path's turns read since then: `unfolded` is their size with the current turn's, and
 * `summarizedTokens` is set so that the header's count less it is that size (the header also counts other
 * branches' turns), which lets the turns that continue the path decide from the two counts again.
 */
export function rebasedDigest(options: {
  base: Pick<SessionDigest, 'summary' | 'summarizedThrough' | 'recentExchanges'>;
  gaps: readonly OrdinalGap[];
  /** The header's textTokens with the current turn's (counted once). */
  headerTokens: number;
  unfolded: number;
  at: string;
}): SessionDigest {
  const { base, gaps, headerTokens, unfolded, at } = options;
  return {
    summary: base.summary,
    summarizedThrough: base.summarizedThrough,
    // Headers older than their textTokens count less than their turns hold: never below nothing.
    summarizedTokens: Math.max(0, headerTokens - unfolded),
    recentExchanges: [...base.recentExchanges]
      .sort((a, b) => a.ordinal - b.ordinal)
      .slice(-PROMPT_EXCHANGE_LINES),
    updatedAt: at,
    gaps: [...gaps],
  };
}
