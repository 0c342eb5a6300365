// Pure bookkeeping of a conversation's rolling digest (seed 003 layers 2 and 3): how much history is not folded
// into the summary yet (the header's running count less the digest's), when to fold and which stored turns, and
// the digest after a fold. The history worker (persist-turn.ts) reads and writes the digest; nothing here does I/O.
import { messageTokens } from '../chat/prompt.js';
import { PROMPT_EXCHANGE_LINES, type ExchangeEntry, type SessionDigest } from './contracts.js';

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
 * The prompt tokens of the persisted history not in the summary: every persisted turn's (the header's count, plus
 * this turn's while the header does not count it yet) less the folded turns' (the digest's). Two numbers, so the
 * decision costs the same at turn 1 and turn 500; a redelivered turn is counted once (the header counts it once
 * it is recorded), and a turn whose fold already happened finds the digest's count advanced.
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
