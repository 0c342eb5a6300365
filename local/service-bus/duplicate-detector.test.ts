import { describe, expect, it } from 'vitest';
import { DuplicateDetector } from './duplicate-detector.js';

describe('DuplicateDetector', () => {
  it('drops an id seen within the window and accepts it again once the window has passed', () => {
    let time = 1_000;
    const detector = new DuplicateDetector(100, () => time);

    expect(detector.isDuplicate('a')).toBe(false);
    time += 99;
    expect(detector.isDuplicate('a')).toBe(true);
    expect(detector.isDuplicate('b')).toBe(false);
    time += 1;
    expect(detector.isDuplicate('a')).toBe(false);
    expect(detector.isDuplicate('b')).toBe(true);
  });

  it('does not extend the window when it drops a duplicate', () => {
    let time = 0;
    const detector = new DuplicateDetector(100, () => time);
    detector.isDuplicate('a');
    time = 90;
    expect(detector.isDuplicate('a')).toBe(true);
    time = 100;
    expect(detector.isDuplicate('a')).toBe(false);
  });

  it('with a zero window, never drops anything', () => {
    const detector = new DuplicateDetector(0, () => 5);
    expect(detector.isDuplicate('a')).toBe(false);
    expect(detector.isDuplicate('a')).toBe(false);
  });

  it('hands over its history within the window, and a new detector honours it', () => {
    let time = 0;
    const before = new DuplicateDetector(100, () => time);
    before.isDuplicate('old');
    time = 50;
    before.isDuplicate('recent');
    time = 120;
    expect(before.history()).toEqual([['recent', 50]]);

    const after = new DuplicateDetector(100, () => time);
    after.restore([
      ['old', 0],
      ['recent', 50],
    ]);
    expect(after.isDuplicate('recent')).toBe(true);
    expect(after.isDuplicate('old')).toBe(false);
    time = 150;
    expect(after.isDuplicate('recent')).toBe(false);
  });
});
