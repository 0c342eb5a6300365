import { describe, expect, it } from 'vitest';
import { dateGroup, groupByDate } from './date-groups';

const now = new Date(2026, 11, 5, 9, 30);
const at = (days: number, hour = 12) => new Date(2026, 11, 5 - days, hour).toISOString();

describe('date groups of the sidebar', () => {
  it('puts a conversation under its day, counted in whole calendar days', () => {
    expect(dateGroup(new Date(2026, 11, 5, 0, 5).toISOString(), now)).toBe('Today');
    expect(dateGroup(at(1, 23), now)).toBe('Yesterday');
    expect(dateGroup(at(2), now)).toBe('Previous 7 days');
    expect(dateGroup(at(7), now)).toBe('Previous 7 days');
    expect(dateGroup(at(8), now)).toBe('Previous 30 days');
    expect(dateGroup(at(30), now)).toBe('Previous 30 days');
    expect(dateGroup(at(31), now)).toBe('Older');
    expect(dateGroup('not a date', now)).toBe('Older');
  });

  it('keeps the order of the items and leaves out empty groups', () => {
    const items = [at(0), at(0, 8), at(3), at(40)];
    expect(groupByDate(items, (item) => item, now)).toEqual([
      { group: 'Today', items: [at(0), at(0, 8)] },
      { group: 'Previous 7 days', items: [at(3)] },
      { group: 'Older', items: [at(40)] },
    ]);
  });
});
