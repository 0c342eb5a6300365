// The token estimate every budget is counted in.
import { describe, expect, it } from 'vitest';
import { imageCaption, inlinedFile, type MessageAttachment } from '../message-attachments.js';
import { estimateTokens, imageTokens, messageTokens } from './tokens.js';

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

const photo = (width: number, height: number): MessageAttachment => ({
  id: `att-${'1'.repeat(32)}`,
  name: 'p.jpg',
  mediaType: 'image/jpeg',
  size: 1000,
  width,
  height,
});

describe('imageTokens', () => {
  it('counts 170 tokens per 512-pixel tile and 85 more, after scaling to 2048 then the short side to 768', () => {
    // 1024 square becomes 768 square: 2 × 2 tiles.
    expect(imageTokens(1024, 1024)).toBe(85 + 170 * 4);
    // 2048 × 4096 fits 1024 × 2048, then 768 × 1536: 2 × 3 tiles.
    expect(imageTokens(2048, 4096)).toBe(85 + 170 * 6);
    expect(imageTokens(4096, 8192)).toBe(imageTokens(2048, 4096));
    // A small image is never enlarged.
    expect(imageTokens(100, 100)).toBe(85 + 170);
    expect(imageTokens(512, 513)).toBe(85 + 170 * 2);
  });
});

describe('messageTokens with files', () => {
  const rules = { imageShown: true, textTokens: 100 };

  it('adds a shown image by its pixels, and the caption in a turn too old to show it', () => {
    const message = { content: 'look', attachments: [photo(1024, 1024)] };
    expect(messageTokens(message, rules)).toBe(messageTokens({ content: 'look' }) + imageTokens(1024, 1024));
    const captioned = messageTokens(message, { ...rules, imageShown: false });
    expect(captioned).toBe(messageTokens({ content: `look\n\n${imageCaption(photo(1024, 1024))}` }));
    expect(captioned).toBeLessThan(messageTokens(message, rules));
  });

  it('counts an image without its size as the largest a stored image can cost', () => {
    const { width: _w, height: _h, ...unsized } = photo(1, 1);
    expect(messageTokens({ content: '', attachments: [unsized] })).toBe(
      messageTokens({ content: '' }) + imageTokens(768, 2048),
    );
  });

  it("adds a text file's bytes within the message's text budget, and a PDF as much as the budget leaves", () => {
    const notes: MessageAttachment = {
      id: `att-${'2'.repeat(32)}`,
      name: 'n.md',
      mediaType: 'text/markdown',
      size: 90,
    };
    const small = messageTokens({ content: 'q', attachments: [notes] }, rules);
    expect(small).toBe(messageTokens({ content: `q\n\n${inlinedFile(notes, 'x'.repeat(90))}` }));
    // A file larger than the budget (100 tokens = 400 characters) counts as the budget, not its size.
    const large = messageTokens({ content: 'q', attachments: [{ ...notes, size: 1_000_000 }] }, rules);
    expect(large).toBeGreaterThan(estimateTokens('x'.repeat(400)));
    expect(large).toBeLessThan(estimateTokens('x'.repeat(1000)));
    // A PDF's text is unknown before it is read: it may take what is left of the budget.
    const pdf: MessageAttachment = { ...notes, name: 'a.pdf', mediaType: 'application/pdf', size: 10 };
    const both = messageTokens({ content: 'q', attachments: [notes, pdf] }, rules);
    expect(both - small).toBeGreaterThan(estimateTokens('x'.repeat(400 - 90)));
  });

  it('counts a message without files as its text alone', () => {
    expect(messageTokens({ content: 'abcd', attachments: [] }, rules)).toBe(
      messageTokens({ content: 'abcd' }),
    );
  });
});
