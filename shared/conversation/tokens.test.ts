// The token estimate every budget is counted in.
import { describe, expect, it } from 'vitest';
import { estimateTokens, messageTokens } from './tokens.js';

describe('estimateTokens', () => {
  it('counts one token per 3 UTF-8 bytes, rounded up', () => {
    expect(estimateTokens('')).toBe(0);
    expect(estimateTokens('abc')).toBe(1);
    expect(estimateTokens('abcd')).toBe(2);
  });

  it('gives CJK text about one token per character (3 bytes each)', () => {
    expect(estimateTokens('你好世界')).toBe(4);
    expect(estimateTokens('こんにちは')).toBe(5);
  });
});

describe('messageTokens', () => {
  it("adds what the API puts around a message to its text's estimate", () => {
    expect(messageTokens({ content: 'abcd' })).toBe(estimateTokens('abcd') + 4);
  });
});
