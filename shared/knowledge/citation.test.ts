// The citation rule: a page, a range of pages, else the innermost heading, else the title alone.
import { describe, expect, it } from 'vitest';
import { citationOf, MAX_CITATION_CHARS, shortened } from './citation.js';

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

describe('a citation that runs on', () => {
  it(`is cut to ${MAX_CITATION_CHARS} characters at a word, with an ellipsis`, () => {
    const title = 'Handbook '.repeat(22).trim();
    const heading = 'A heading that never ends '.repeat(40);
    const citation = citationOf(title, undefined, heading);
    expect([...citation].length).toBeLessThanOrEqual(MAX_CITATION_CHARS);
    expect([...citation].length).toBeGreaterThan((MAX_CITATION_CHARS * 4) / 5);
    // The whole title, then the heading up to the end of a word.
    const full = `${title} › ${heading.trim()}`;
    expect(citation.endsWith('…')).toBe(true);
    expect(full.startsWith(citation.slice(0, -1))).toBe(true);
    expect(full[citation.length - 1]).toBe(' ');
    expect([...citationOf('x'.repeat(400), [4])]).toHaveLength(MAX_CITATION_CHARS);
  });
});

describe('shortened', () => {
  it('keeps a text that fits, and cuts a longer one at a word in its last fifth, else between characters', () => {
    expect(shortened('Parental leave', 14)).toBe('Parental leave');
    expect(shortened('Parental leave is paid', 20)).toBe('Parental leave is…');
    expect(shortened('Parental leavepolicy', 12)).toBe('Parental le…');
    const emoji = shortened('😀'.repeat(50), 10);
    expect([...emoji]).toHaveLength(10);
    expect(emoji.endsWith('😀…')).toBe(true);
  });
});
