// The digest's bookkeeping: the unfolded history (a turn counted once), folding past half the budget down to a
// quarter, whole turns, what a fold moves into the summary; the paths a digest serves, its checkpoint, and a
// rebased digest that counts only its path.
import { describe, expect, it } from 'vitest';
import { PROMPT_EXCHANGE_LINES, type ExchangeEntry, type SessionDigest } from './contracts.js';
import {
  checkpointOf,
  digestStandsFor,
  foldedDigest,
  foldIsDue,
  groupTurns,
  rebasedDigest,
  turnsToFold,
  turnTokens,
  unfoldedTokens,
} from './digest.js';

const at = '2026-11-22T10:00:00.000Z';
const digestOf = (fields: Partial<SessionDigest> = {}): SessionDigest => ({
  summary: '',
  summarizedThrough: 0,
  summarizedTokens: 0,
  recentExchanges: [],
  updatedAt: at,
  gaps: [],
  ...fields,
});
const turn = (n: number, tokens = 100) => ({
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

describe('unfoldedTokens', () => {
  it("is the header's count with this turn, less what the digest folded", () => {
    const header = { textTokens: 900, persistedCount: 10 };
    expect(unfoldedTokens(header, { upTo: 12, tokens: 50 }, undefined)).toBe(950);
    expect(unfoldedTokens(header, { upTo: 12, tokens: 50 }, digestOf({ summarizedTokens: 600 }))).toBe(350);
  });

  it('counts a turn the header already recorded once (a redelivery)', () => {
    const header = { textTokens: 950, persistedCount: 12 };
    expect(unfoldedTokens(header, { upTo: 12, tokens: 50 }, digestOf({ summarizedTokens: 600 }))).toBe(350);
  });
});

describe('foldIsDue', () => {
  it('past half the budget only', () => {
    expect(foldIsDue(500, 1000)).toBe(false);
    expect(foldIsDue(501, 1000)).toBe(true);
  });
});

describe('groupTurns', () => {
  const message = (chatMessageId: string, ordinal: number, content = 'abc') => ({
    chatMessageId,
    ordinal,
    content,
  });

  it('groups consecutive messages of one chatMessageId into a turn with its span and size', () => {
    const turns = groupTurns([
      message('a', 4),
      message('a', 5),
      message('a', 6, ''),
      message('b', 7),
      message('c', 8),
      message('c', 9),
    ]);
    expect(
      turns.map(({ chatMessageId, fromOrdinal, toOrdinal, tokens }) => [
        chatMessageId,
        fromOrdinal,
        toOrdinal,
        tokens,
      ]),
    ).toEqual([
      ['a', 4, 6, 10],
      ['b', 7, 7, 5],
      ['c', 8, 9, 10],
    ]);
    expect(turns[0]?.messages.map((m) => m.ordinal)).toEqual([4, 5, 6]);
    expect(groupTurns([])).toEqual([]);
  });
});

describe('turnsToFold', () => {
  it('takes the oldest until the rest is at most a quarter of the budget', () => {
    // 600 unfolded: folding m0 leaves 400, m1 leaves 200 (≤ 250).
    const turns = [turn(0, 200), turn(1, 200), turn(2, 100)];
    expect(turnsToFold(turns, 600, 1000)).toEqual({ fold: [turn(0, 200), turn(1, 200)], enough: true });
  });

  it('takes every turn given, and says so, when they are not enough yet (more to read)', () => {
    expect(turnsToFold([turn(0, 100), turn(1, 100)], 900, 1000)).toEqual({
      fold: [turn(0, 100), turn(1, 100)],
      enough: false,
    });
    expect(turnsToFold([], 900, 1000)).toEqual({ fold: [], enough: false });
  });

  it('takes nothing when the rest is already small enough', () => {
    expect(turnsToFold([turn(0)], 250, 1000)).toEqual({ fold: [], enough: true });
  });
});

describe('foldedDigest', () => {
  it('creates the first digest from a fold', () => {
    const next = foldedDigest(
      undefined,
      { turns: [turn(0, 120), turn(1, 80)], summary: 'S', lines: [line(1), line(0)] },
      'later',
    );
    expect(next).toEqual({
      summary: 'S',
      summarizedThrough: 4,
      summarizedTokens: 200,
      recentExchanges: [line(0), line(1)],
      updatedAt: 'later',
      gaps: [],
    });
  });

  it("moves on from the previous digest: its summary's end, its count, its lines", () => {
    const previous = digestOf({
      summary: 'old',
      summarizedThrough: 4,
      summarizedTokens: 200,
      recentExchanges: [line(0), line(1)],
    });
    expect(
      foldedDigest(previous, { turns: [turn(2, 50)], summary: 'S2', lines: [line(2)] }, 'later'),
    ).toEqual({
      summary: 'S2',
      summarizedThrough: 6,
      summarizedTokens: 250,
      recentExchanges: [line(0), line(1), line(2)],
      updatedAt: 'later',
      gaps: [],
    });
  });

  it('keeps the newest PROMPT_EXCHANGE_LINES lines', () => {
    const old = Array.from({ length: PROMPT_EXCHANGE_LINES }, (_, n) => line(n));
    const digest = digestOf({ recentExchanges: old, summarizedThrough: PROMPT_EXCHANGE_LINES * 2 });
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

describe('digestStandsFor', () => {
  it('serves every path that holds what it folded, whatever they hold above it', () => {
    const folded = digestOf({ summarizedThrough: 10, gaps: [{ from: 2, to: 4 }] });
    expect(digestStandsFor(folded, [{ from: 2, to: 4 }])).toBe(true);
    // A regenerate above it, and the branch's own gap merged with one above it.
    expect(
      digestStandsFor(folded, [
        { from: 2, to: 4 },
        { from: 10, to: 14 },
      ]),
    ).toBe(true);
    expect(
      digestStandsFor(folded, [
        { from: 2, to: 4 },
        { from: 12, to: 14 },
      ]),
    ).toBe(true);
  });

  it('serves no path that lacks a folded message, or holds one it did not fold', () => {
    const folded = digestOf({ summarizedThrough: 10, gaps: [{ from: 2, to: 4 }] });
    // An edit of the turn at 6 (its path skips 6..9 and above).
    expect(
      digestStandsFor(folded, [
        { from: 2, to: 4 },
        { from: 6, to: 12 },
      ]),
    ).toBe(false);
    // The other branch at 2..3: it holds 2 and 3, which the summary left out, and skips what it folded.
    expect(digestStandsFor(folded, [{ from: 4, to: 12 }])).toBe(false);
    expect(digestStandsFor(folded, [])).toBe(false);
  });

  it('serves every path while it has folded nothing', () => {
    expect(digestStandsFor(digestOf({ gaps: [{ from: 0, to: 4 }] }), [{ from: 4, to: 8 }])).toBe(true);
  });
});

describe('checkpointOf', () => {
  it('keeps the summary and the part of the path below it, named by its last folded message', () => {
    const digest = digestOf({
      summary: 'S',
      summarizedThrough: 10,
      gaps: [
        { from: 2, to: 4 },
        { from: 8, to: 12 },
        { from: 14, to: 16 },
      ],
    });
    expect(checkpointOf(digest, 'now')).toEqual({
      summary: 'S',
      summarizedThrough: 10,
      lastOrdinal: 9,
      gaps: [
        { from: 2, to: 4 },
        { from: 8, to: 10 },
      ],
      createdAt: 'now',
    });
    expect(checkpointOf(digestOf(), 'now')).toBeUndefined();
  });
});

describe('rebasedDigest', () => {
  it("counts the header's turns off the path as summarised, so the path's unfolded part is what remains", () => {
    const next = rebasedDigest({
      base: { summary: 'S', summarizedThrough: 4, recentExchanges: [line(1), line(0)] },
      gaps: [{ from: 6, to: 12 }],
      headerTokens: 1_500,
      unfolded: 400,
      at: 'later',
    });
    expect(next).toEqual({
      summary: 'S',
      summarizedThrough: 4,
      summarizedTokens: 1_100,
      recentExchanges: [line(0), line(1)],
      updatedAt: 'later',
      gaps: [{ from: 6, to: 12 }],
    });
    // The next turn of the path (100 tokens), once the header counts this one: 400 + 100 unfolded.
    expect(unfoldedTokens({ textTokens: 1_500, persistedCount: 12 }, { upTo: 14, tokens: 100 }, next)).toBe(
      500,
    );
  });

  it('never counts below nothing for a header older than its token count', () => {
    const next = rebasedDigest({
      base: { summary: '', summarizedThrough: 0, recentExchanges: [] },
      gaps: [],
      headerTokens: 100,
      unfolded: 400,
      at,
    });
    expect(next.summarizedTokens).toBe(0);
  });
});
