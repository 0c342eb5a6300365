// Pure bookkeeping of a conversation's rolling digest (seed 003 layers 2 and 3): the persisted turns waiting to be
// folded into the summary, when to fold and which turns, and the digest after a fold. The history worker
// (persist-turn.ts) reads and writes the digest; nothing here does I/O.
import { estimateTokens } from '../chat/prompt.js';
import {
  PROMPT_EXCHANGE_LINES,
  type ExchangeEntry,
  type PendingTurn,
  type SessionDigest,
} from './contracts.js';

/** What the API adds around each message, in tokens, as prompt.ts counts it. */
const MESSAGE_OVERHEAD_TOKENS = 4;

export function emptyDigest(at: string): SessionDigest {
  return { summary: '', summarizedThrough: 0, recentExchanges: [], pending: [], updatedAt: at };
}

/**
 * A turn's size in the prompt: its user and assistant text, counted as prompt.ts counts history (a message without
 * text is not replayed, and tool traffic never is).
 */
export function turnTokens(messages: readonly { content: string }[]): number {
  return messages
    .filter((message) => message.content !== '')
    .reduce((sum, message) => sum + estimateTokens(message.content) + MESSAGE_OVERHEAD_TOKENS, 0);
}

/** The pending entry of a turn from its committed messages (at least one). */
export function pendingTurnOf(
  chatMessageId: string,
  messages: readonly { content: string; ordinal: number }[],
): PendingTurn {
  const ordinals = messages.map((message) => message.ordinal);
  return {
    chatMessageId,
    fromOrdinal: Math.min(...ordinals),
    toOrdinal: Math.max(...ordinals),
    tokens: turnTokens(messages),
  };
}

/**
 * Whether the digest already accounts for the turn: it is pending, or its messages are in the summary. A
 * redelivered event then changes nothing, so a turn is never pending twice nor folded twice.
 */
export function holdsTurn(digest: SessionDigest, turn: PendingTurn): boolean {
  return (
    turn.fromOrdinal < digest.summarizedThrough ||
    digest.pending.some((pending) => pending.chatMessageId === turn.chatMessageId)
  );
}

/** The digest with the turn pending (oldest first); unchanged when it already holds the turn. */
export function withPendingTurn(digest: SessionDigest, turn: PendingTurn, at: string): SessionDigest {
  if (holdsTurn(digest, turn)) return digest;
  const pending = [...digest.pending, turn].sort((a, b) => a.fromOrdinal - b.fromOrdinal);
  return { ...digest, pending, updatedAt: at };
}

/**
 * The oldest pending turns to fold into the summary: none while the pending turns take at most half the prompt
 * budget; past that, the oldest until the rest take at most a quarter, so a fold (one LLM call) happens every few
 * turns rather than every turn. The newest turn is never folded: the next question most often refers to it, and
 * the prompt fits it to the budget by itself.
 */
export function turnsToFold(pending: readonly PendingTurn[], promptTokenBudget: number): PendingTurn[] {
  let remaining = pending.reduce((sum, turn) => sum + turn.tokens, 0);
  if (remaining <= promptTokenBudget / 2) return [];
  const folded: PendingTurn[] = [];
  for (const turn of pending.slice(0, -1)) {
    if (remaining <= promptTokenBudget / 4) break;
    folded.push(turn);
    remaining -= turn.tokens;
  }
  return folded;
}

/** The ordinal span the folded turns' messages take (one page read of the long-term messages). */
export function foldedSpan(folded: readonly PendingTurn[]): { after: number | undefined; count: number } {
  const from = Math.min(...folded.map((turn) => turn.fromOrdinal));
  const to = Math.max(...folded.map((turn) => turn.toOrdinal));
  return { after: from === 0 ? undefined : from - 1, count: to - from + 1 };
}

/**
 * The digest once the folded turns are in `summary`: the summary covers every message below the last folded
 * ordinal, the folded exchanges' index lines join the newest (PROMPT_EXCHANGE_LINES kept), and the turns leave
 * `pending`.
 */
export function foldedDigest(
  digest: SessionDigest,
  fold: { turns: readonly PendingTurn[]; summary: string; lines: readonly ExchangeEntry[] },
  at: string,
): SessionDigest {
  const foldedIds = new Set(fold.turns.map((turn) => turn.chatMessageId));
  const lineIds = new Set(fold.lines.map((line) => line.exchangeId));
  const through = Math.max(digest.summarizedThrough, ...fold.turns.map((turn) => turn.toOrdinal + 1));
  const recentExchanges = [
    ...digest.recentExchanges.filter((entry) => !lineIds.has(entry.exchangeId)),
    ...[...fold.lines].sort((a, b) => a.ordinal - b.ordinal),
  ].slice(-PROMPT_EXCHANGE_LINES);
  return {
    summary: fold.summary,
    summarizedThrough: through,
    recentExchanges,
    pending: digest.pending.filter((turn) => !foldedIds.has(turn.chatMessageId)),
    updatedAt: at,
  };
}
