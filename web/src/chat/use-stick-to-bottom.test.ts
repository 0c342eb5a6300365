import { describe, expect, it } from 'vitest';
import { followsAfterScroll } from './use-stick-to-bottom';

describe('followsAfterScroll', () => {
  it('stops following when the reader scrolls up, even within the margin of the bottom', () => {
    expect(followsAfterScroll({ sticking: true, top: 900, lastTop: 1000, distance: 100 })).toBe(false);
    expect(followsAfterScroll({ sticking: true, top: 990, lastTop: 1000, distance: 10 })).toBe(false);
  });

  it('follows again when the reader comes back down to the bottom', () => {
    expect(followsAfterScroll({ sticking: false, top: 1000, lastTop: 900, distance: 20 })).toBe(true);
    expect(followsAfterScroll({ sticking: false, top: 950, lastTop: 900, distance: 80 })).toBe(false);
  });

  it('keeps the reader’s choice when shrinking content pulls the position up to the new end', () => {
    expect(followsAfterScroll({ sticking: false, top: 5325, lastTop: 5669, distance: 0 })).toBe(false);
    expect(followsAfterScroll({ sticking: true, top: 5325, lastTop: 6469, distance: 0 })).toBe(true);
  });
});
