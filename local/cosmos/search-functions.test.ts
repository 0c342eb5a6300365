// Unit tests of the local server's test-only search functions: the grammar they accept, VectorDistance's cosine,
// FullTextScore's BM25 and RRF's fusion on hand-computed figures, and refusal of what they do not understand.
import { describe, expect, it } from 'vitest';
import { isSearchQuery, runSearchQuery } from './search-functions.js';
import { SearchQueryError } from './search-query-parser.js';

const documents = [
  { id: 'a', kind: 'x', text: 'cat sat', v: [1, 0] },
  { id: 'b', kind: 'x', text: 'cat cat dog', v: [0, 1] },
  { id: 'c', kind: 'x', text: 'bird', v: [0.6, 0.8] },
  { id: 'd', kind: 'y', text: 'cat', v: [1, 0] },
];

describe('search functions', () => {
  it('recognises queries that use them', () => {
    expect(
      isSearchQuery('SELECT * FROM c ORDER BY RANK RRF(VectorDistance(c.v, @v), FullTextScore(c.t, "a"))'),
    ).toBe(true);
    expect(isSearchQuery('SELECT * FROM c WHERE c.kind = @kind ORDER BY c.timestamp DESC')).toBe(false);
  });

  it('projects VectorDistance as the cosine similarity and orders most similar first', () => {
    const rows = runSearchQuery(
      'SELECT TOP 2 c.id, VectorDistance(c.v, @v) AS similarity FROM c WHERE c.kind = @kind ORDER BY VectorDistance(c.v, @v)',
      [
        { name: '@v', value: [0, 2] },
        { name: '@kind', value: 'x' },
      ],
      documents,
    );
    expect(rows).toEqual([
      { id: 'b', similarity: 1 },
      { id: 'c', similarity: expect.closeTo(0.8, 12) as number },
    ]);
  });

  it('ranks by BM25 with terms as separate arguments or as an array', () => {
    const separate = runSearchQuery(
      "SELECT c.id FROM c WHERE c.kind = 'x' ORDER BY RANK FullTextScore(c.text, 'cats', @t)",
      [{ name: '@t', value: 'dog' }],
      documents,
    );
    const array = runSearchQuery(
      'SELECT c.id FROM c WHERE c.kind = "x" ORDER BY RANK FullTextScore(c.text, ["cats", "dog"])',
      [],
      documents,
    );
    expect(separate.map((row) => row.id)).toEqual(['b', 'a', 'c']);
    expect(array).toEqual(separate);
  });

  it('fuses ranks with RRF: Σ weight / (60 + rank)', () => {
    // Vector ranks (query [1, 0]): a 1, c 2, b 3. Text ranks ("dog"): b 1, a and c 2 (no match, one rank).
    // a: 1/61 + 1/62, b: 1/63 + 1/61, c: 1/62 + 1/62 (the extremes outweigh the middle: b before c).
    const rows = runSearchQuery(
      "SELECT c.id FROM c WHERE c.kind = 'x' ORDER BY RANK RRF(VectorDistance(c.v, @v), FullTextScore(c.text, 'dog'))",
      [{ name: '@v', value: [1, 0] }],
      documents,
    );
    expect(rows.map((row) => row.id)).toEqual(['a', 'b', 'c']);
    // Weighted: the text rank counts three times as much.
    const weighted = runSearchQuery(
      "SELECT c.id FROM c WHERE c.kind = 'x' ORDER BY RANK RRF(VectorDistance(c.v, @v), FullTextScore(c.text, 'dog'), [1, 3])",
      [{ name: '@v', value: [1, 0] }],
      documents,
    );
    expect(weighted.map((row) => row.id)).toEqual(['b', 'a', 'c']);
  });

  it('filters with ARRAY_CONTAINS and NOT ARRAY_CONTAINS, before ranking', () => {
    const sql =
      'SELECT c.id FROM c WHERE ARRAY_CONTAINS(@kinds, c.kind) AND NOT ARRAY_CONTAINS(@hidden, c.id) ' +
      'ORDER BY RANK FullTextScore(c.text, "cat")';
    const run = (kinds: unknown, hidden: unknown) =>
      runSearchQuery(
        sql,
        [
          { name: '@kinds', value: kinds },
          { name: '@hidden', value: hidden },
        ],
        documents,
      ).map((row) => row.id);
    expect(run(['x'], [])).toEqual(['b', 'a', 'c']);
    expect(run(['x', 'y'], ['b'])).toEqual(['d', 'a', 'c']);
    expect(run(['y'], ['d'])).toEqual([]);
    // Not an array: ARRAY_CONTAINS is undefined, and so is its NOT; no document passes.
    expect(run('x', [])).toEqual([]);
    expect(run(['x'], 'b')).toEqual([]);
    // A document without the path: ARRAY_CONTAINS of undefined is undefined, and so is its NOT.
    const withoutKind = [...documents, { id: 'e', text: 'cat', v: [1, 0] }];
    const kindless = (sql: string) =>
      runSearchQuery(sql, [{ name: '@kinds', value: ['x'] }], withoutKind).map((row) => row.id);
    expect(
      kindless(
        'SELECT c.id FROM c WHERE ARRAY_CONTAINS(@kinds, c.kind) ORDER BY RANK FullTextScore(c.text, "cat")',
      ),
    ).toEqual(['b', 'a', 'c']);
    expect(
      kindless(
        'SELECT c.id FROM c WHERE NOT ARRAY_CONTAINS(@kinds, c.kind) ORDER BY RANK FullTextScore(c.text, "cat")',
      ),
    ).toEqual(['d']);
    // An array literal, and a condition of each kind together.
    expect(
      runSearchQuery(
        "SELECT c.id FROM c WHERE c.kind = 'x' AND NOT ARRAY_CONTAINS(['a', 'c'], c.id) ORDER BY VectorDistance(c.v, [1, 0])",
        [],
        documents,
      ),
    ).toEqual([{ id: 'b' }]);
  });

  it('filters with IS_DEFINED and a parenthesised OR, as a scope that may be absent is', () => {
    const withoutKind = [...documents, { id: 'e', text: 'cat', v: [1, 0] }];
    const sql =
      'SELECT c.id FROM c WHERE (NOT IS_DEFINED(c.kind) OR ARRAY_CONTAINS(@kinds, c.kind)) ' +
      'ORDER BY RANK FullTextScore(c.text, "cat")';
    const run = (kinds: string[]) =>
      runSearchQuery(sql, [{ name: '@kinds', value: kinds }], withoutKind).map((row) => row.id);
    expect(run(['y'])).toEqual(['d', 'e']);
    expect(run([])).toEqual(['e']);
    expect(
      runSearchQuery(
        'SELECT c.id FROM c WHERE IS_DEFINED(c.kind) ORDER BY RANK FullTextScore(c.text, "cat")',
        [],
        withoutKind,
      ).map((row) => row.id),
    ).not.toContain('e');
  });

  it('refuses what it does not understand', () => {
    const run = (sql: string) => () => runSearchQuery(sql, [], documents);
    expect(run('SELECT FullTextScore(c.text, "a") AS s FROM c')).toThrow(SearchQueryError);
    expect(run('SELECT * FROM c ORDER BY RANK FullTextScore(c.text)')).toThrow(SearchQueryError);
    expect(run('SELECT * FROM c ORDER BY RANK VectorDistance(c.v, @missing)')).toThrow(SearchQueryError);
    expect(run('SELECT * FROM c WHERE c.kind > 1 ORDER BY RANK VectorDistance(c.v, [1, 0])')).toThrow(
      SearchQueryError,
    );
    expect(run('SELECT * FROM c WHERE NOT c.kind = 1 ORDER BY RANK VectorDistance(c.v, [1, 0])')).toThrow(
      SearchQueryError,
    );
    expect(
      run('SELECT * FROM c WHERE ARRAY_CONTAINS(["x"], d.kind) ORDER BY RANK VectorDistance(c.v, [1, 0])'),
    ).toThrow(SearchQueryError);
  });
});
