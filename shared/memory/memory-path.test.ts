import { describe, expect, it } from 'vitest';
import { followsPath } from './memory-path.js';

// The summary's path: written after turn `b` (ordinals 2, 3) on a branch that skips 0..2 of nothing.
const summary = { chatMessageId: 'b', gaps: [], coveredThrough: 3 };

describe('followsPath', () => {
  it('follows the turn after the summary, and a redelivery of the summary turn itself', () => {
    expect(followsPath(summary, 'c', { parent: 'b', gaps: [], firstOrdinal: 4 })).toBe(true);
    expect(followsPath(summary, 'b', { parent: 'a', gaps: [], firstOrdinal: 2 })).toBe(true);
  });

  it('follows a turn after turns memory left out (a failed one, or use_memory false) on the same path', () => {
    // c (4, 5) failed and was never consolidated; d continues c on the same path.
    expect(followsPath(summary, 'd', { parent: 'c', gaps: [], firstOrdinal: 6 })).toBe(true);
  });

  it('does not follow a turn whose path skips what the summary covered, or has other gaps', () => {
    // A regenerate of b: its path skips 2..6, where the summary's turn is.
    expect(followsPath(summary, 'r', { parent: 'a', gaps: [{ from: 2, to: 6 }], firstOrdinal: 6 })).toBe(
      false,
    );
    // Same gaps as the summary's, but the summary's turn is the path's skipped part: cannot be with equal gaps.
    expect(
      followsPath({ ...summary, gaps: [{ from: 2, to: 4 }], coveredThrough: 3 }, 'x', {
        parent: 'w',
        gaps: [{ from: 2, to: 4 }],
        firstOrdinal: 8,
      }),
    ).toBe(false);
  });
});
