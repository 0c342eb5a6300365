import { describe, expect, it } from 'vitest';
import { matchingPassages, paragraphChunker } from './attachment-passages.js';

const filler = (i: number) =>
  `Paragraph ${i}: the river ran past mill number ${i} on a mild and quiet morning.`;

describe('passages of a file too long for the prompt', () => {
  const paragraphs = Array.from({ length: 200 }, (_, i) => filler(i));
  paragraphs[101] = 'The vault code is 7319, kept by the night porter.';
  const text = paragraphs.join('\n\n');

  it('keeps the passage that answers the question, wherever it is, within the budget', () => {
    const found = matchingPassages(text, 'What is the vault code?', 400, paragraphChunker);
    expect(found.text).toContain('The vault code is 7319');
    expect(found.text.length).toBeLessThanOrEqual(400);
    expect(found.of).toBe(200);
    expect(found.kept).toBeGreaterThan(1);
  });

  it("keeps the file's order, and its start when no word of the question occurs", () => {
    const found = matchingPassages(text, 'Who won the cup?', 250, paragraphChunker);
    expect(found.text.startsWith(filler(0))).toBe(true);
    const kept = found.text.split('\n[…]\n');
    expect(kept).toEqual(paragraphs.slice(0, kept.length));
  });
});
