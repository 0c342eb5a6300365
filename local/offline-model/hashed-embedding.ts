// Deterministic hashed bag-of-words vectors: each content word's stem adds a weight at a hashed position, then the
// vector is L2-normalised, so texts that share words have a higher cosine similarity. No meaning, only overlap.
import { PLAIN_TEXT, type TextAnalysis } from './vocabulary.js';

/**
 * Stand-in rules, so simple searches rank as with a real model: stop words ("the", "how", "my") carry nothing, the
 * forms of a word meet at its stem (laptops, laptop), and a word repeated weighs 1 + ln(count), not count (one word
 * said ten times does not drown the rest). A text of stop words only is hashed by those words. Words, stop words and
 * stems are the app's (`text`), so the vectors' words meet where its full-text search's do.
 */
export function hashedEmbedding(
  text: string,
  dimensions: number,
  analysis: TextAnalysis = PLAIN_TEXT,
): number[] {
  const { words: wordsOf, isStopWord, stem } = analysis;
  const vector = new Array<number>(dimensions).fill(0);
  const all = wordsOf(text);
  const content = all.filter((word) => !isStopWord(word));
  const counts = new Map<string, number>();
  for (const word of content.length > 0 ? content : all) {
    const stemmed = stem(word);
    counts.set(stemmed, (counts.get(stemmed) ?? 0) + 1);
  }
  for (const [word, count] of counts) {
    const slot = fnv1a(word) % dimensions;
    // A second, independent hash picks the sign so colliding words cancel out instead of piling up.
    const sign = fnv1a(`±${word}`) & 1 ? 1 : -1;
    vector[slot] = (vector[slot] ?? 0) + sign * (1 + Math.log(count));
  }
  // A text without words still gets a unit vector (cosine with a zero vector is undefined).
  if (counts.size === 0 || vector.every((value) => value === 0)) vector[fnv1a(text) % dimensions] = 1;
  const norm = Math.sqrt(vector.reduce((sum, value) => sum + value * value, 0));
  // Rounded to float32 so the float and base64 encodings carry exactly the same numbers.
  return vector.map((value) => Math.fround(value / norm));
}

export function encodeFloat32Base64(values: readonly number[]): string {
  const bytes = Buffer.alloc(values.length * 4);
  values.forEach((value, i) => bytes.writeFloatLE(value, i * 4));
  return bytes.toString('base64');
}

/** 32-bit FNV-1a over UTF-16 code units; stable across runs and platforms. */
export function fnv1a(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0;
}
