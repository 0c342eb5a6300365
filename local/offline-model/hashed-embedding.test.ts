// Hashed bag-of-words vectors: deterministic, unit length, and closer for texts that share words.
import { describe, expect, it } from 'vitest';
import { MODEL_MIN_SIMILARITY } from '../../shared/search/relevance.js';
import { productVocabulary } from '../offline-model-vocabulary.js';
import { encodeFloat32Base64, hashedEmbedding } from './hashed-embedding.js';
import { OFFLINE_EMBEDDING_MODEL } from './offline-model.js';

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

  it('weighs content words only, meets the forms of a word at its stem, and damps repeats (the stand-in rules)', () => {
    const dims = 1536;
    const embed = (text: string) => hashedEmbedding(text, dims, productVocabulary.text);
    const query = embed('How do I replace my laptop?');
    // Only "replace" and "laptop" count: the question words weigh nothing.
    expect(cosine(query, embed('replace laptop'))).toBeCloseTo(1, 5);
    expect(cosine(query, embed('Laptops are replaced every three years'))).toBeGreaterThan(0.5);
    // "the" ten times does not make two texts alike.
    const filler = 'the the the the the the the the the the';
    expect(cosine(embed(`${filler} canteen menu`), embed(`${filler} VPN reset`))).toBe(0);
    // A word said five times weighs 1 + ln 5, not 5.
    const repeated = embed('leave leave leave leave leave policy');
    expect(cosine(repeated, embed('policy'))).toBeCloseTo(1 / Math.sqrt(1 + (1 + Math.log(5)) ** 2), 5);
  });

  it('reads words as the app it is handed reads them: without one, forms of a word and stop words count as written', () => {
    const dims = 1536;
    const plain = (text: string) => hashedEmbedding(text, dims);
    expect(cosine(plain('How do I replace my laptop?'), plain('replace laptop'))).toBeLessThan(0.9);
    expect(cosine(plain('laptops'), plain('laptop'))).toBeLessThan(0.5);
    const stemmed = (text: string) => hashedEmbedding(text, dims, productVocabulary.text);
    expect(cosine(stemmed('laptops'), stemmed('laptop'))).toBeCloseTo(1, 5);
  });

  it('has its own entry in the search thresholds by model', () => {
    expect(MODEL_MIN_SIMILARITY.some(([part]) => OFFLINE_EMBEDDING_MODEL.includes(part))).toBe(true);
  });
});
