// A personal API key's text: `cmk_`, a 12-character id, a 32-character random secret and a 6-character CRC32
// checksum, all base62, so a secret scanner can recognise a leaked key and a typo is refused without a lookup.
// Keys are kept only as SHA-256 hashes and compared in constant time.
import { createHash, randomInt, timingSafeEqual } from 'node:crypto';
import { crc32 } from 'node:zlib';
import { API_KEY_PREFIX } from '../identity/api-key-auth.js';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
export const KEY_ID_CHARS = 12;
const SECRET_CHARS = 32;
const CHECKSUM_CHARS = 6;
/** The whole key's length: 54 characters. */
export const API_KEY_CHARS = API_KEY_PREFIX.length + KEY_ID_CHARS + SECRET_CHARS + CHECKSUM_CHARS;
const KEY_SHAPE = new RegExp(
  `^${API_KEY_PREFIX}[0-9A-Za-z]{${KEY_ID_CHARS + SECRET_CHARS + CHECKSUM_CHARS}}$`,
);

/** `count` characters drawn uniformly from base62 (crypto.randomInt has no modulo bias). */
function randomBase62(count: number): string {
  let text = '';
  for (let index = 0; index < count; index += 1) text += BASE62[randomInt(62)] ?? '';
  return text;
}

/** A 32-bit number in base62, left-padded to six characters (62^6 > 2^32). */
function base62Checksum(value: number): string {
  let rest = value;
  let text = '';
  for (let index = 0; index < CHECKSUM_CHARS; index += 1) {
    text = (BASE62[rest % 62] ?? '') + text;
    rest = Math.floor(rest / 62);
  }
  return text;
}

function checksumOf(body: string): string {
  return base62Checksum(crc32(body));
}

export interface MintedKey {
  /** The whole key: shown once, to its owner, then never again. */
  key: string;
  /** Not secret: names the key in lists and is where its record is kept. */
  keyId: string;
  /** SHA-256 of the whole key, hex: the only form of it that is stored. */
  keyHash: string;
  /** What lists show of the key: the prefix and its id. */
  displayPrefix: string;
}

/** A new key with a fresh id and secret (about 190 random bits in the secret alone). */
export function mintApiKey(): MintedKey {
  const keyId = randomBase62(KEY_ID_CHARS);
  const body = `${API_KEY_PREFIX}${keyId}${randomBase62(SECRET_CHARS)}`;
  const key = `${body}${checksumOf(body)}`;
  return { key, keyId, keyHash: hashApiKey(key), displayPrefix: displayPrefixOf(keyId) };
}

/** The key's id when the text is a well-formed key whose checksum holds; undefined otherwise (no lookup needed). */
export function parseApiKey(text: string): { keyId: string } | undefined {
  if (text.length !== API_KEY_CHARS || !KEY_SHAPE.test(text)) return undefined;
  const body = text.slice(0, -CHECKSUM_CHARS);
  if (checksumOf(body) !== text.slice(-CHECKSUM_CHARS)) return undefined;
  return { keyId: body.slice(API_KEY_PREFIX.length, API_KEY_PREFIX.length + KEY_ID_CHARS) };
}

export function hashApiKey(key: string): string {
  return createHash('sha256').update(key, 'utf8').digest('hex');
}

/** Whether the key's hash is the stored one, compared in constant time. */
export function keyMatchesHash(key: string, storedHash: string): boolean {
  const presented = Buffer.from(hashApiKey(key), 'hex');
  const stored = Buffer.from(storedHash, 'hex');
  return presented.length === stored.length && timingSafeEqual(presented, stored);
}

export function displayPrefixOf(keyId: string): string {
  return `${API_KEY_PREFIX}${keyId}`;
}
