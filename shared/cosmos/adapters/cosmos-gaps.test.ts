// The conditions on a path's gaps: each range a pair of parameters, named anew by every call, so conditions on the
// same or another field go into one query side by side.
import { describe, expect, it } from 'vitest';
import { outsideGaps, withinGaps } from './cosmos-gaps.js';

const gaps = [
  { from: 2, to: 4 },
  { from: 6, to: 9 },
];

describe('gap conditions', () => {
  it('leave out every gap, each a pair of parameters, and add nothing without gaps', () => {
    const { sql, parameters } = outsideGaps('c.ordinal', gaps);
    const names = parameters.map((parameter) => parameter.name);
    expect(parameters.map((parameter) => parameter.value)).toEqual([2, 4, 6, 9]);
    expect(sql).toBe(
      ` AND NOT (c.ordinal >= ${names[0]} AND c.ordinal < ${names[1]})` +
        ` AND NOT (c.ordinal >= ${names[2]} AND c.ordinal < ${names[3]})`,
    );
    expect(outsideGaps('c.ordinal', [])).toEqual({ sql: '', parameters: [] });
  });

  it('keep what lies in one of the gaps, and nothing when there are none', () => {
    const { sql, parameters } = withinGaps('c.source.ordinal', gaps);
    const names = parameters.map((parameter) => parameter.name);
    expect(sql).toBe(
      ` AND ((c.source.ordinal >= ${names[0]} AND c.source.ordinal < ${names[1]})` +
        ` OR (c.source.ordinal >= ${names[2]} AND c.source.ordinal < ${names[3]}))`,
    );
    expect(withinGaps('c.source.ordinal', [])).toEqual({ sql: ' AND false', parameters: [] });
  });

  it('name the parameters of every call apart, so two conditions share a query', () => {
    const names = [outsideGaps('c.ordinal', gaps), withinGaps('c.ordinal', gaps)].flatMap((condition) =>
      condition.parameters.map((parameter) => parameter.name),
    );
    expect(new Set(names).size).toBe(8);
    for (const name of names) expect(name).toMatch(/^@[A-Za-z0-9_]+$/);
  });
});
