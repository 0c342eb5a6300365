// Unit tests of what earns a search hit its place: the per-model thresholds, the SEARCH_* settings, and the ranking
// functions that apply the rule (a query that matches nothing returns nothing).
import { describe, expect, it } from 'vitest';
import { readSettings, SettingProblems, settingsOf } from '../settings/setting.js';
import { fuseRanks, nearest, rankCandidates, rankQuery, termCounts } from './hybrid-ranking.js';
import { admitted, candidatePool, minSimilarityFor, SEARCH_CANDIDATES, type Relevance } from './relevance.js';
import { searchRelevance, searchSettings } from './settings.js';

const RULE: Relevance = { minSimilarity: 0.3, textMatchAdmits: true };

describe('minSimilarityFor', () => {
  it('knows the OpenAI models by name or deployment name, and the offline stand-in', () => {
    expect(minSimilarityFor('text-embedding-3-small')).toBe(0.3);
    expect(minSimilarityFor('my-TEXT-EMBEDDING-3-large-deployment')).toBe(0.3);
    expect(minSimilarityFor('text-embedding-ada-002')).toBe(0.8);
    expect(minSimilarityFor('offline-stand-in-embedding')).toBe(0.3);
    expect(minSimilarityFor('nomic-embed-text')).toBe(0.3);
  });
});

describe('searchRelevance', () => {
  const read = (env: Record<string, string>) => {
    const problems = new SettingProblems(settingsOf(searchSettings));
    const values = readSettings(searchSettings, env, problems);
    return { values, problems };
  };

  it('takes the model default unless SEARCH_MIN_SIMILARITY is set, and admits word matches by default', () => {
    expect(searchRelevance(read({}).values, 'text-embedding-ada-002')).toEqual({
      minSimilarity: 0.8,
      textMatchAdmits: true,
    });
    expect(
      searchRelevance(
        read({ SEARCH_MIN_SIMILARITY: '0.45', SEARCH_TEXT_MATCH_ADMITS: 'false' }).values,
        'text-embedding-ada-002',
      ),
    ).toEqual({ minSimilarity: 0.45, textMatchAdmits: false });
  });

  it('refuses a threshold that is not a number from -1 to 1', () => {
    for (const bad of ['1.5', 'high', '0,3']) {
      const { problems } = read({ SEARCH_MIN_SIMILARITY: bad });
      expect(() => problems.throwIfAny()).toThrow(/SEARCH_MIN_SIMILARITY/);
    }
  });
});

describe('admitted', () => {
  const text = termCounts('Laptops are encrypted at rest');
  it('keeps a hit that holds a word of the query, or one similar enough', () => {
    expect(admitted(RULE, { similarity: 0, text }, ['laptop'])).toBe(true);
    expect(admitted(RULE, { similarity: 0.3, text }, ['canteen'])).toBe(true);
    expect(admitted(RULE, { similarity: 0.29, text }, ['canteen'])).toBe(false);
    expect(admitted({ ...RULE, textMatchAdmits: false }, { similarity: 0.1, text }, ['laptop'])).toBe(false);
  });

  it('ranks at least SEARCH_CANDIDATES candidates, more when more are asked for', () => {
    expect(candidatePool(5)).toBe(SEARCH_CANDIDATES);
    expect(candidatePool(80)).toBe(80);
  });
});

describe('rankQuery with a relevance rule', () => {
  // Two orthogonal directions: the query points along the first.
  const candidates = [
    { id: 'leave', vector: [0.9, 0.1], text: termCounts('Parental leave lasts sixteen weeks') },
    { id: 'crypto', vector: [0, 1], text: termCounts('Disks use encryption at rest') },
    { id: 'canteen', vector: [0, 1], text: termCounts('The canteen opens at noon') },
  ];

  it('returns only the hits that earn their place: a word match ranks first even when far by vector', () => {
    const found = rankQuery(candidates, { text: 'encryption', vector: [1, 0], limit: 5, relevance: RULE });
    expect(found.map((hit) => hit.candidate.id)).toEqual(['leave', 'crypto']);
    const strict = rankQuery(candidates, {
      text: 'encryption',
      vector: [1, 0],
      limit: 5,
      relevance: { minSimilarity: 0.999, textMatchAdmits: true },
    });
    expect(strict.map((hit) => hit.candidate.id)).toEqual(['crypto']);
  });

  it('returns nothing for a query that matches nothing', () => {
    expect(rankQuery(candidates, { text: 'quantum', vector: [-1, 0], limit: 5, relevance: RULE })).toEqual(
      [],
    );
  });
});

describe('nearest and rankCandidates', () => {
  it('take the nearest by vector (ties by id), then fuse and keep those admitted', () => {
    const candidates = [
      { id: 'b', vector: [1, 0], text: termCounts('a trip to Lisbon') },
      { id: 'a', vector: [1, 0], text: termCounts('a trip to Porto') },
      { id: 'c', vector: [0, 1], text: termCounts('adding two numbers') },
    ];
    const near = nearest(candidates, [1, 0], 2);
    expect(near.map((candidate) => candidate.id)).toEqual(['a', 'b']);
    const ranked = rankCandidates(near, { text: 'Lisbon', limit: 5, relevance: RULE });
    expect(ranked.map((hit) => hit.candidate.id)).toEqual(['b', 'a']);
    expect(
      rankCandidates(nearest(candidates, [0, 1], 3), { text: 'Lisbon', limit: 5, relevance: RULE }),
    ).toEqual([
      expect.objectContaining({ candidate: expect.objectContaining({ id: 'c' }) as unknown }),
      expect.objectContaining({ candidate: expect.objectContaining({ id: 'b' }) as unknown }),
    ]);
    expect(fuseRanks([], ['lisbon'], 3)).toEqual([]);
  });
});
