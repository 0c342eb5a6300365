import { describe, expect, it } from 'vitest';
import { utf8Bytes } from './utf8.js';

describe('utf8Bytes', () => {
  it('counts as Node encodes', () => {
    for (const text of [
      '',
      'plain',
      'é',
      '€ sign',
      '日本語',
      'emoji 😀 pair',
      '\ud800 lone',
      '\ud800é',
      'end \ud83d',
    ])
      expect(utf8Bytes(text)).toBe(Buffer.byteLength(text, 'utf8'));
  });
});
