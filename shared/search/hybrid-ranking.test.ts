// Unit tests of the in-process hybrid ranking: cosine, BM25 (with the full-text module's stems), dense ranks, RRF
// and the order of a fused list, on hand-computed figures.
import { describe, expect, it } from 'vitest';
import {
  bm25Scores,
  cosineSimilarity,
  denseRanks,
  queryTerms,
  rankHybrid,
  RRF_K,
  rrfScore,
  termCounts,
  type RankCandidate,
} from './hybrid-ranking.js';

describe('cosineSimilarity', () => {
  it('is 1 for the same direction, -1 for the opposite, 0 for orthogonal, zero or mismatched vectors', () => {
    expect(cosineSimilarity([1, 2, 3], [2, 4, 6])).toBeCloseTo(1, 12);
    expect(cosineSimilarity([1, 0], [-3, 0])).toBeCloseTo(-1, 12);
    expect(cosineSimilarity([1, 0], [0, 5])).toBe(0);
    expect(cosineSimilarity([0, 0], [1, 1])).toBe(0);
    expect(cosineSimilarity([1, 2], [1, 2, 3])).toBe(0);
    expect(cosineSimilarity(Float32Array.from([3, 4]), [4, 3])).toBeCloseTo(24 / 25, 6);
  });
});

describe('queryTerms and termCounts', () => {
  it('drop stop words, keep one term per distinct word, and stem both sides alike', () => {
    expect(queryTerms('The hotels and the hotels of Kyoto')).toEqual(['hotel', 'kyoto']);
    expect(queryTerms('the and of')).toEqual([]);
    const counts = termCounts('Hotels, hotel and more HOTELS');
    expect(counts.length).toBe(5);
    expect(counts.counts.get('hotel')).toBe(3);
  });
});

describe('bm25Scores', () => {
  it('matches the formula on a small corpus', () => {
    const documents = ['cat sat', 'cat cat dog', 'bird'].map(termCounts);
    const [a, b, c] = bm25Scores(['cat'], documents);
    // N = 3, n = 2 → idf = ln(1 + 1.5 / 2.5); average length 2.
    const idf = Math.log(1 + 1.5 / 2.5);
    const score = (tf: number, length: number) =>
      (idf * tf * 2.2) / (tf + 1.2 * (0.25 + (0.75 * length) / 2));
    expect(a).toBeCloseTo(score(1, 2), 12);
    expect(b).toBeCloseTo(score(2, 3), 12);
    expect(c).toBe(0);
  });

  it('scores a rare term above a common one, and nothing without terms or documents', () => {
    const documents = ['apple banana', 'apple cherry', 'apple date'].map(termCounts);
    const [common] = bm25Scores(queryTerms('apple'), documents);
    const [, rare] = bm25Scores(queryTerms('cherry'), documents);
    expect(common).toBeGreaterThan(0);
    expect(rare).toBeGreaterThan(common ?? Infinity);
    expect(bm25Scores([], documents)).toEqual([0, 0, 0]);
    expect(bm25Scores(['apple'], [])).toEqual([]);
  });
});

describe('denseRanks and rrfScore', () => {
  it('give equal scores one rank and the next score the next rank', () => {
    expect(denseRanks([0.5, 0.9, 0.5, 0.1])).toEqual([2, 1, 2, 3]);
    expect(denseRanks([])).toEqual([]);
  });

  it('sum 1 / (k + rank) over the components', () => {
    expect(rrfScore([1, 3])).toBeCloseTo(1 / (RRF_K + 1) + 1 / (RRF_K + 3), 15);
    expect(rrfScore([2], 10)).toBeCloseTo(1 / 12, 15);
  });
});

describe('rankHybrid', () => {
  const candidate = (id: string, vector: number[], text: string): RankCandidate => ({
    id,
    vector,
    text: termCounts(text),
  });

  it('fuses the vector and full-text ranks', () => {
    const candidates = [
      candidate('close-vector', [1, 0], 'nothing relevant here'),
      candidate('both', [0.8, 0.6], 'kyoto hotels'),
      candidate('words-only', [0, 1], 'kyoto'),
    ];
    const ranked = rankHybrid(candidates, { vector: [1, 0], terms: queryTerms('Kyoto hotels') }, 3);
    // Vector ranks 1, 2, 3; BM25 ranks 3, 1, 2.
    expect(ranked.map((item) => item.id)).toEqual(['both', 'close-vector', 'words-only']);
    expect(ranked[0]?.score).toBeCloseTo(1 / (RRF_K + 2) + 1 / (RRF_K + 1), 15);
    expect(ranked[1]?.score).toBeCloseTo(1 / (RRF_K + 1) + 1 / (RRF_K + 3), 15);
    expect(ranked[2]?.score).toBeCloseTo(1 / (RRF_K + 3) + 1 / (RRF_K + 2), 15);
  });

  it('orders equal fused scores by similarity', () => {
    const candidates = [
      candidate('words-only', [0, 1], 'kyoto hotels'),
      candidate('close-vector', [1, 0], 'nothing'),
      candidate('middle', [0.8, 0.6], 'kyoto'),
    ];
    // Vector ranks 3, 1, 2; BM25 ranks 1, 3, 2: 1/63 + 1/61 twice, against 2/62.
    const ranked = rankHybrid(candidates, { vector: [1, 0], terms: queryTerms('Kyoto hotels') }, 3);
    expect(ranked.map((item) => item.id)).toEqual(['close-vector', 'words-only', 'middle']);
    expect(ranked[0]?.score).toBe(ranked[1]?.score);
  });

  it('ranks by vector alone without terms, cuts at the limit, and breaks full ties by id', () => {
    const candidates = [
      candidate('b', [1, 1], 'x'),
      candidate('a', [1, 1], 'y'),
      candidate('c', [-1, 0], 'z'),
    ];
    const ranked = rankHybrid(candidates, { vector: [1, 1], terms: [] }, 2);
    expect(ranked.map((item) => item.id)).toEqual(['a', 'b']);
    expect(ranked[0]?.score).toBeCloseTo(1 / (RRF_K + 1), 15);
    expect(rankHybrid(candidates, { vector: [1, 1], terms: [] }, 0)).toEqual([]);
    expect(rankHybrid([], { vector: [1, 1], terms: ['x'] }, 5)).toEqual([]);
  });

  it('does not depend on the order the candidates come in', () => {
    const candidates = Array.from({ length: 30 }, (_, i) =>
      candidate(`s-${i}`, [Math.cos(i), Math.sin(i)], i % 3 === 0 ? 'garden roses' : 'other words'),
    );
    const query = { vector: [1, 0.2], terms: queryTerms('garden') };
    const forward = rankHybrid(candidates, query, 10);
    const backward = rankHybrid([...candidates].reverse(), query, 10);
    expect(backward).toEqual(forward);
  });
});
