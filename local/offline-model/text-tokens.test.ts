// Tokens must concatenate back to the exact text, whatever it holds.
import { describe, expect, it } from 'vitest';
import { countTokens, splitJsonFragments, splitWords } from './text-tokens.js';

const samples = [
  'Hello, world!',
  '  leading and trailing  \n',
  ' \n\n',
  'emoji 🧡💙 and U+202F: April\u202f4, 2025 — done.',
  'tabs\tand\r\nCRLF',
  '',
  'a',
];

describe('splitWords', () => {
  it('concatenates back to the exact text', () => {
    for (const text of samples) expect(splitWords(text).join('')).toBe(text);
  });

  it('keeps leading whitespace with the word that follows and splits punctuation off', () => {
    expect(splitWords('Hi there, you!')).toEqual(['Hi', ' there', ',', ' you', '!']);
    expect(countTokens('Hi there, you!')).toBe(5);
  });
});

describe('splitJsonFragments', () => {
  it('cuts JSON the way OpenAI fragments tool arguments, losslessly', () => {
    const json = JSON.stringify({ city: 'San Francisco', n: -2.5, list: ['ls -l', true] });
    expect(splitJsonFragments(json).join('')).toBe(json);
    expect(splitJsonFragments('{"a":2,"b":3}')).toEqual(['{"', 'a', '":', '2', ',"', 'b', '":', '3', '}']);
  });
});
