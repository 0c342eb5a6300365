// The rules for text shown in user interfaces: what refuses a title a user wrote, how a name or line that came from
// elsewhere is cleaned (path, controls, unpaired surrogates, bidirectional controls, NFC), and shortening.
import { describe, expect, it } from 'vitest';
import { cleanDisplayText, cut, displayFileName, displayTextProblem } from './plain-text.js';

describe('displayTextProblem', () => {
  it('accepts ordinary text in any script, emoji and right-to-left words included', () => {
    for (const text of ['Trip to Lisbon', 'Größe 🚀', 'שלום עולם', 'مرحبا', 'A\u200Fb'])
      expect(displayTextProblem(text)).toBeUndefined();
  });

  it.each([
    ['a NUL', 'evil\u0000', /control characters/],
    ['a line break', 'two\nlines', /control characters/],
    ['a C1 control', 'next\u0085line', /control characters/],
    ['a right-to-left override', 'invoice\u202Efdp.exe', /bidirectional/],
    ['an embedding', '\u202Ax', /bidirectional/],
    ['an isolate', '\u2066x\u2069', /bidirectional/],
    ['a lone high surrogate', 'x\ud83d', /unpaired surrogates/],
    ['a lone low surrogate', '\ude80x', /unpaired surrogates/],
  ])('refuses %s', (_case, text, problem) => {
    expect(displayTextProblem(text)).toMatch(problem);
  });
});

describe('cleanDisplayText', () => {
  it('drops controls, unpaired surrogates and bidirectional controls, keeps one line, and normalises to NFC', () => {
    expect(cleanDisplayText(' invoice\u202Efdp\u0000.exe ')).toBe('invoicefdp.exe');
    expect(cleanDisplayText('first\r\nsecond\tthird')).toBe('first second third');
    expect(cleanDisplayText('half \ud83d pair 🚀')).toBe('half pair 🚀');
    expect(cleanDisplayText('Cafe\u0301')).toBe('Café');
    expect(cleanDisplayText('\u0000\u202E')).toBe('');
  });
});

describe('displayFileName', () => {
  it('keeps the last segment of a Windows or POSIX path, cleaned', () => {
    expect(displayFileName('C:\\x\\evil\\0.md')).toBe('0.md');
    expect(displayFileName('C:\\x\\evil\u0000.md')).toBe('evil.md');
    expect(displayFileName('../../etc/passwd')).toBe('passwd');
    expect(displayFileName('docs/report\u202Efdp.md')).toBe('reportfdp.md');
    expect(displayFileName('dir/')).toBe('');
  });
});

describe('cut', () => {
  it('never splits a surrogate pair', () => {
    expect(cut('🚀🚀🚀', 2)).toBe('🚀…');
  });
});
