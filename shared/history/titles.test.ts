// The first-message title: short messages as they are, long ones cut at a word with '…', within 80 characters.
import { describe, expect, it } from 'vitest';
import { FIRST_MESSAGE_TITLE_CHARS } from './contracts.js';
import { firstMessageTitle, UNTITLED } from './titles.js';

describe('firstMessageTitle', () => {
  it('keeps a short message, trimmed, on one line', () => {
    expect(firstMessageTitle('  How do I\n\tdeploy   this?  ')).toBe('How do I deploy this?');
  });

  it('drops bidirectional controls and unpaired surrogates, and normalises to NFC', () => {
    expect(firstMessageTitle('Pay \u202Efdp.exe\u202C \ud83d now, cafe\u0301')).toBe('Pay fdp.exe now, café');
  });

  it('keeps a message of exactly the limit whole', () => {
    const text = 'x'.repeat(FIRST_MESSAGE_TITLE_CHARS);
    expect(firstMessageTitle(text)).toBe(text);
  });

  it('cuts a long message at a word boundary and marks the cut', () => {
    const title = firstMessageTitle(`${'wordy '.repeat(30)}end`);
    expect(title).toBe(`${'wordy '.repeat(12)}wordy…`);
    expect(title.length).toBeLessThanOrEqual(FIRST_MESSAGE_TITLE_CHARS);
  });

  it('uses the whole room when the cut falls right before a space', () => {
    const text = `${'a'.repeat(79)} tail`;
    expect(firstMessageTitle(text)).toBe(`${'a'.repeat(79)}…`);
  });

  it('cuts inside a word that is too long to keep whole', () => {
    const title = firstMessageTitle(`ab ${'x'.repeat(200)}`);
    expect(title).toBe(`ab ${'x'.repeat(76)}…`);
  });

  it('never splits a character outside the Basic Multilingual Plane', () => {
    const title = firstMessageTitle('😀'.repeat(60));
    expect(title.length).toBeLessThanOrEqual(FIRST_MESSAGE_TITLE_CHARS);
    expect(title).toBe(`${'😀'.repeat(39)}…`);
  });

  it('drops control characters and names a message without text', () => {
    expect(firstMessageTitle('a\u0000b')).toBe('ab');
    expect(firstMessageTitle(' \n\u0001 ')).toBe(UNTITLED);
  });
});
