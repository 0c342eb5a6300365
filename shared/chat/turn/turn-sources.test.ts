// The turn's sources from its tool results: in the order found (round, call, rank) whatever order the results are
// read in, each chunk once with its first find, at most MAX_TURN_SOURCES; and which rounds added to it.
import { describe, expect, it } from 'vitest';
import { MAX_TURN_SOURCES, type KnowledgeSource } from '../../conversation/sources.js';
import { sourcesGrewIn, turnSources } from './turn-sources.js';

const source = (chunkId: string, score = 0.01): KnowledgeSource => ({
  chunkId,
  documentId: 'a'.repeat(32),
  title: 'Handbook',
  citation: 'Handbook',
  excerpt: chunkId,
  score,
});

describe('turnSources', () => {
  it('lists the sources by round, then call, then rank, each chunk once with its first find', () => {
    const results = [
      { round: 1, index: 0, sources: [source('c'), source('a', 0.5)] },
      { round: 0, index: 1, sources: [source('b')] },
      { round: 0, index: 0, sources: [source('a'), source('d')] },
      { round: 1, index: 1 },
    ];
    expect(turnSources(results).map((s) => s.chunkId)).toEqual(['a', 'd', 'b', 'c']);
    expect(turnSources(results)[0]?.score).toBe(0.01);
  });

  it(`keeps at most ${MAX_TURN_SOURCES}`, () => {
    const many = Array.from({ length: 30 }, (_, i) => source(`c${i}`));
    const listed = turnSources([
      { round: 0, index: 0, sources: many.slice(0, 15) },
      { round: 1, index: 0, sources: many.slice(10) },
    ]);
    expect(listed.map((s) => s.chunkId)).toEqual(many.slice(0, MAX_TURN_SOURCES).map((s) => s.chunkId));
  });

  it('is empty for a turn whose tools found none', () => {
    expect(turnSources([])).toEqual([]);
    expect(
      turnSources([
        { round: 0, index: 0 },
        { round: 0, index: 1, sources: [] },
      ]),
    ).toEqual([]);
  });
});

describe('sourcesGrewIn', () => {
  it('tells the rounds whose calls added to the turn’s sources', () => {
    const results = [
      { round: 0, index: 0, sources: [source('a')] },
      { round: 1, index: 0, sources: [] },
      { round: 2, index: 0 },
      { round: 3, index: 0, sources: [source('a')] },
      { round: 4, index: 0, sources: [source('a'), source('b')] },
    ];
    expect([0, 1, 2, 3, 4, 5, -1].map((round) => sourcesGrewIn(results, round))).toEqual([
      true,
      false,
      false,
      false,
      true,
      false,
      false,
    ]);
  });

  it(`says no once ${MAX_TURN_SOURCES} are listed, whatever a later round finds`, () => {
    const many = Array.from({ length: 30 }, (_, i) => source(`c${i}`));
    const results = [
      { round: 0, index: 0, sources: many.slice(0, MAX_TURN_SOURCES - 1) },
      { round: 1, index: 0, sources: many.slice(MAX_TURN_SOURCES - 1, MAX_TURN_SOURCES + 2) },
      { round: 2, index: 0, sources: many.slice(MAX_TURN_SOURCES + 2) },
    ];
    expect([0, 1, 2].map((round) => sourcesGrewIn(results, round))).toEqual([true, true, false]);
  });
});
