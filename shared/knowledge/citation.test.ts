// The citation rule: a page, a range of pages, else the innermost heading, else the title alone.
import { describe, expect, it } from 'vitest';
import { citationOf } from './citation.js';

describe('citationOf', () => {
  it('cites one page as p. and a range as pp. with an en dash', () => {
    expect(citationOf('Employee Handbook', [4])).toBe('Employee Handbook, p. 4');
    expect(citationOf('Employee Handbook', [4, 5, 6])).toBe('Employee Handbook, pp. 4–6');
    expect(citationOf('Employee Handbook', [4, 5], 'Leave')).toBe('Employee Handbook, pp. 4–5');
  });

  it('cites the heading of a document without pages, else the title', () => {
    expect(citationOf('Employee Handbook', undefined, 'Parental leave')).toBe(
      'Employee Handbook › Parental leave',
    );
    expect(citationOf('Employee Handbook', undefined, '  ')).toBe('Employee Handbook');
    expect(citationOf('Employee Handbook')).toBe('Employee Handbook');
    expect(citationOf('Employee Handbook', [])).toBe('Employee Handbook');
  });
});
