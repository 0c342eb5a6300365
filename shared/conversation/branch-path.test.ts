import { describe, expect, it } from 'vitest';
import { ConflictError } from '../errors.js';
import { forkBranch, inGaps, leftRanges, onPath, sameGaps } from './branch-path.js';
import { MAIN_BRANCH, MAX_PATH_GAPS, type TurnBranch } from './branches.js';

const main = (parent: string | null): TurnBranch => ({
  parentChatMessageId: parent,
  branchId: MAIN_BRANCH,
  gaps: [],
});

describe('branch paths', () => {
  it('a regenerate of the newest turn skips just the replaced turn', () => {
    // Turns a (0,1), b (2,3), c (4,5); c is regenerated as d at 6.
    const branch = forkBranch({
      fork: { replaces: 'c', origin: 'regenerate' },
      newChatMessageId: 'd',
      replaced: main('b'),
      parent: { branch: main('a'), lastOrdinal: 3 },
      firstOrdinal: 6,
    });
    expect(branch).toEqual({
      parentChatMessageId: 'b',
      branchId: 'd',
      alternativeOf: 'c',
      origin: 'regenerate',
      gaps: [{ from: 4, to: 6 }],
    });
    expect([0, 1, 2, 3, 4, 5, 6, 7].filter((o) => onPath(o, branch, 7))).toEqual([0, 1, 2, 3, 6, 7]);
  });

  it('an edit of the first message skips everything before it, and a second alternative joins the first group', () => {
    const first = forkBranch({
      fork: { replaces: 'a', origin: 'edit' },
      newChatMessageId: 'e',
      replaced: main(null),
      firstOrdinal: 4,
    });
    expect(first.gaps).toEqual([{ from: 0, to: 4 }]);
    expect(first.parentChatMessageId).toBeNull();
    const second = forkBranch({
      fork: { replaces: 'e', origin: 'regenerate' },
      newChatMessageId: 'f',
      replaced: first,
      firstOrdinal: 6,
    });
    expect(second).toMatchObject({ alternativeOf: 'a', gaps: [{ from: 0, to: 6 }] });
  });

  it('keeps the gaps before the fork and merges one that ends where the new one starts', () => {
    const parent: TurnBranch = {
      parentChatMessageId: 'x',
      branchId: 'p',
      gaps: [
        { from: 2, to: 6 },
        { from: 8, to: 10 },
      ],
    };
    const branch = forkBranch({
      fork: { replaces: 'q', origin: 'edit' },
      newChatMessageId: 'n',
      replaced: { parentChatMessageId: 'p', branchId: 'p', gaps: parent.gaps },
      parent: { branch: parent, lastOrdinal: 11 },
      firstOrdinal: 20,
    });
    expect(branch.gaps).toEqual([
      { from: 2, to: 6 },
      { from: 8, to: 10 },
      { from: 12, to: 20 },
    ]);
    const merged = forkBranch({
      fork: { replaces: 'q', origin: 'edit' },
      newChatMessageId: 'n',
      replaced: main('p'),
      parent: { branch: { ...parent, gaps: [{ from: 2, to: 12 }] }, lastOrdinal: 11 },
      firstOrdinal: 20,
    });
    expect(merged.gaps).toEqual([{ from: 2, to: 20 }]);
  });

  it('refuses a fork beyond the limit of gaps on one path', () => {
    const gaps = Array.from({ length: MAX_PATH_GAPS }, (_, i) => ({ from: i * 4, to: i * 4 + 2 }));
    expect(() =>
      forkBranch({
        fork: { replaces: 'q', origin: 'edit' },
        newChatMessageId: 'n',
        replaced: main('p'),
        parent: {
          branch: { parentChatMessageId: 'o', branchId: 'b', gaps },
          lastOrdinal: MAX_PATH_GAPS * 4 + 1,
        },
        firstOrdinal: MAX_PATH_GAPS * 4 + 10,
      }),
    ).toThrow(ConflictError);
  });

  it('tells which ranges a move between paths leaves', () => {
    expect(inGaps(4, [{ from: 4, to: 6 }])).toBe(true);
    expect(inGaps(6, [{ from: 4, to: 6 }])).toBe(false);
    // From the main line to a branch that skips 4..6: 4 and 5 are left.
    expect(leftRanges([], [{ from: 4, to: 6 }], 8)).toEqual([{ from: 4, to: 6 }]);
    // From that branch back to one that skips 6..8 (the branch's own turn): only 6 and 7 are left.
    expect(leftRanges([{ from: 4, to: 6 }], [{ from: 4, to: 8 }], 9)).toEqual([{ from: 6, to: 8 }]);
    expect(leftRanges([{ from: 0, to: 10 }], [{ from: 2, to: 4 }], 20)).toEqual([]);
    expect(sameGaps([{ from: 1, to: 2 }], [{ from: 1, to: 2 }])).toBe(true);
    expect(sameGaps([{ from: 1, to: 2 }], [])).toBe(false);
  });
});
