// Deterministic hashed bag-of-words vectors: each word adds ±1 at a hashed position, then the vector is
// L2-normalised, so texts that share words have a higher cosine similarity. No meaning, only overlap.

export function hashedEmbedding(text: string, dimensions: number): number[] {
  const vector = new Array<number>(dimensions).fill(0);
  const words = text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
  for (const word of words) {
    const slot = fnv1a(word) % dimensions;
    // A second, independent hash picks the sign so colliding words cancel out instead of piling up.
    const sign = fnv1a(`±${word}`) & 1 ? 1 : -1;
    vector[slot] = (vector[slot] ?? 0) + sign;
  }
  // A text without words still gets a unit vector (cosine with a zero vector is undefined).
  if (words.length === 0 || vector.every((value) => value === 0)) vector[fnv1a(text) % dimensions] = 1;
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
