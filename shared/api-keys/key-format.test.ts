// The key's text: recognisable, self-checking, hashed and compared without revealing where it differs.
import { describe, expect, it } from 'vitest';
import {
  API_KEY_CHARS,
  displayPrefixOf,
  hashApiKey,
  keyMatchesHash,
  mintApiKey,
  parseApiKey,
} from './key-format.js';

describe('personal API key format', () => {
  it('mints keys with the prefix, a 12-character id, and a checksum that parses back', () => {
    const minted = mintApiKey();
    expect(minted.key).toMatch(/^cmk_[0-9A-Za-z]{50}$/);
    expect(minted.key).toHaveLength(API_KEY_CHARS);
    expect(minted.key.slice(4, 16)).toBe(minted.keyId);
    expect(parseApiKey(minted.key)).toEqual({ keyId: minted.keyId });
    expect(minted.displayPrefix).toBe(displayPrefixOf(minted.keyId));
    expect(minted.key.startsWith(minted.displayPrefix)).toBe(true);
    // The prefix shown in lists is far from the whole key.
    expect(minted.displayPrefix.length).toBeLessThan(minted.key.length / 3);
  });

  it('mints a different id and secret each time', () => {
    const keys = Array.from({ length: 200 }, () => mintApiKey());
    expect(new Set(keys.map((key) => key.key)).size).toBe(200);
    expect(new Set(keys.map((key) => key.keyId)).size).toBe(200);
  });

  it('refuses any single changed character through the checksum, before any lookup', () => {
    const { key } = mintApiKey();
    const alphabet = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
    let refused = 0;
    for (let index = 4; index < key.length; index += 1) {
      const original = key[index] ?? '';
      const replacement = alphabet[(alphabet.indexOf(original) + 1) % alphabet.length] ?? '';
      const typo = key.slice(0, index) + replacement + key.slice(index + 1);
      if (parseApiKey(typo) === undefined) refused += 1;
    }
    expect(refused).toBe(key.length - 4);
  });

  it.each([
    ['empty', ''],
    ['another prefix', 'sk-' + 'a'.repeat(51)],
    ['too short', 'cmk_abc'],
    ['one character more', `${mintApiKey().key}a`],
    ['a character outside base62', `${mintApiKey().key.slice(0, 20)}_${mintApiKey().key.slice(21)}`],
  ])('refuses a malformed key: %s', (_label, text) => {
    expect(parseApiKey(text)).toBeUndefined();
  });

  it('hashes with SHA-256 and compares the hash exactly', () => {
    const { key, keyHash } = mintApiKey();
    expect(keyHash).toMatch(/^[0-9a-f]{64}$/);
    expect(hashApiKey(key)).toBe(keyHash);
    expect(keyMatchesHash(key, keyHash)).toBe(true);
    expect(keyMatchesHash(mintApiKey().key, keyHash)).toBe(false);
    // A stored hash of another length (a damaged item) never matches, and never throws.
    expect(keyMatchesHash(key, keyHash.slice(2))).toBe(false);
  });
});
