// Hashed bag-of-words vectors: deterministic, unit length, and closer for texts that share words.
import { describe, expect, it } from 'vitest';
import { encodeFloat32Base64, hashedEmbedding } from './hashed-embedding.js';

const cosine = (a: number[], b: number[]) => a.reduce((sum, value, i) => sum + value * (b[i] ?? 0), 0);
const norm = (a: number[]) => Math.sqrt(cosine(a, a));

describe('hashedEmbedding', () => {
  it('is deterministic and L2-normalised', () => {
    const a = hashedEmbedding('Trip to Rome in May', 256);
    expect(a).toEqual(hashedEmbedding('Trip to Rome in May', 256));
    expect(a).toHaveLength(256);
    expect(norm(a)).toBeCloseTo(1, 5);
  });

  it('ranks texts that share words above texts that do not', () => {
    const query = hashedEmbedding('planning a trip to Rome', 256);
    const related = hashedEmbedding('We talked about the Rome trip and hotels', 256);
    const unrelated = hashedEmbedding('Quarterly tax filing deadlines', 256);
    expect(cosine(query, related)).toBeGreaterThan(cosine(query, unrelated));
    expect(cosine(query, hashedEmbedding('PLANNING a TRIP to rome!', 256))).toBeCloseTo(1, 5);
  });

  it('gives a text without words a unit vector', () => {
    expect(norm(hashedEmbedding('', 64))).toBeCloseTo(1, 5);
    expect(norm(hashedEmbedding('?!', 64))).toBeCloseTo(1, 5);
  });

  it('holds float32 values, so base64 carries exactly the same numbers', () => {
    const vector = hashedEmbedding('exact float32 round trip', 32);
    const bytes = Buffer.from(encodeFloat32Base64(vector), 'base64');
    const decoded = Array.from({ length: 32 }, (_, i) => bytes.readFloatLE(i * 4));
    expect(decoded).toEqual(vector);
  });
});
