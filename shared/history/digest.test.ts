// The digest's bookkeeping: a turn is pending once, folding starts past half the prompt budget and stops at a
// quarter (never folding the newest turn), and a fold moves the turns into the summary and their lines forward.
import { describe, expect, it } from 'vitest';
import { PROMPT_EXCHANGE_LINES, type ExchangeEntry, type PendingTurn } from './contracts.js';
import {
  emptyDigest,
  foldedDigest,
  foldedSpan,
  holdsTurn,
  pendingTurnOf,
  turnsToFold,
  turnTokens,
  withPendingTurn,
} from './digest.js';

const at = '2026-11-22T10:00:00.000Z';
const turn = (n: number, tokens = 100): PendingTurn => ({
  chatMessageId: `m${n}`,
  fromOrdinal: n * 2,
  toOrdinal: n * 2 + 1,
  tokens,
});
const line = (n: number): ExchangeEntry => ({
  exchangeId: `m${n}`,
  ordinal: n * 2,
  line: `Q${n}`,
  tags: ['t'],
  at,
});

describe('turnTokens', () => {
  it('counts the text of each message with its overhead, and nothing for an empty message', () => {
    // 'abcdef' is 6 bytes → 2 tokens, + 4 overhead; 'x' → 1 + 4.
    expect(turnTokens([{ content: 'abcdef' }, { content: 'x' }, { content: '' }])).toBe(11);
  });
});

describe('pendingTurnOf', () => {
  it('spans the ordinals of the turn', () => {
    expect(
      pendingTurnOf('m', [
        { content: 'abc', ordinal: 7 },
        { content: 'abc', ordinal: 8 },
      ]),
    ).toEqual({ chatMessageId: 'm', fromOrdinal: 7, toOrdinal: 8, tokens: 10 });
  });
});

describe('withPendingTurn', () => {
  it('adds a turn once, oldest first', () => {
    let digest = withPendingTurn(emptyDigest(at), turn(1), at);
    digest = withPendingTurn(digest, turn(0), at);
    expect(withPendingTurn(digest, turn(1), 'later')).toBe(digest);
    expect(digest.pending.map((p) => p.chatMessageId)).toEqual(['m0', 'm1']);
  });

  it('leaves out a turn the summary already covers', () => {
    const digest = { ...emptyDigest(at), summarizedThrough: 4 };
    expect(holdsTurn(digest, turn(1))).toBe(true);
    expect(holdsTurn(digest, turn(2))).toBe(false);
    expect(withPendingTurn(digest, turn(1), at)).toBe(digest);
  });
});

describe('turnsToFold', () => {
  it('folds nothing while the pending turns take at most half the budget', () => {
    expect(turnsToFold([turn(0, 250), turn(1, 250)], 1000)).toEqual([]);
  });

  it('folds the oldest until the rest take at most a quarter of the budget', () => {
    // 600 pending: folding m0 leaves 400, m1 leaves 200 (≤ 250).
    const pending = [turn(0, 200), turn(1, 200), turn(2, 100), turn(3, 100)];
    expect(turnsToFold(pending, 1000).map((t) => t.chatMessageId)).toEqual(['m0', 'm1']);
  });

  it('never folds the newest turn, however large', () => {
    expect(turnsToFold([turn(0, 100), turn(1, 5000)], 1000).map((t) => t.chatMessageId)).toEqual(['m0']);
    expect(turnsToFold([turn(0, 5000)], 1000)).toEqual([]);
  });
});

describe('foldedSpan', () => {
  it('is one ascending page from the first folded ordinal to the last', () => {
    expect(foldedSpan([turn(0), turn(1)])).toEqual({ after: undefined, count: 4 });
    expect(foldedSpan([turn(3), turn(4)])).toEqual({ after: 5, count: 4 });
  });
});

describe('foldedDigest', () => {
  it('moves the folded turns into the summary and their lines into the newest lines', () => {
    const digest = { ...emptyDigest(at), pending: [turn(0), turn(1), turn(2)] };
    const next = foldedDigest(
      digest,
      { turns: [turn(0), turn(1)], summary: 'S', lines: [line(1), line(0)] },
      'later',
    );
    expect(next).toEqual({
      summary: 'S',
      summarizedThrough: 4,
      recentExchanges: [line(0), line(1)],
      pending: [turn(2)],
      updatedAt: 'later',
    });
  });

  it('keeps the newest PROMPT_EXCHANGE_LINES lines', () => {
    const old = Array.from({ length: PROMPT_EXCHANGE_LINES }, (_, n) => line(n));
    const digest = {
      ...emptyDigest(at),
      recentExchanges: old,
      summarizedThrough: PROMPT_EXCHANGE_LINES * 2,
      pending: [turn(PROMPT_EXCHANGE_LINES)],
    };
    const next = foldedDigest(
      digest,
      { turns: [turn(PROMPT_EXCHANGE_LINES)], summary: 'S', lines: [line(PROMPT_EXCHANGE_LINES)] },
      at,
    );
    expect(next.recentExchanges).toHaveLength(PROMPT_EXCHANGE_LINES);
    expect(next.recentExchanges[0]).toEqual(line(1));
    expect(next.recentExchanges.at(-1)).toEqual(line(PROMPT_EXCHANGE_LINES));
  });
});
