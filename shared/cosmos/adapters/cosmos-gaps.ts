// Conditions of Cosmos DB queries on ranges of ordinals (a branch path's gaps: `from` in, `to` out). Each range is a
// pair of parameters, whose number is bounded (a path has at most MAX_PATH_GAPS gaps): the query text is never
// built from data. Every call names its parameters anew, so two conditions can go into one query.
import type { SqlParameter } from '@azure/cosmos';

/** A range of ordinals: `from` included, `to` not. */
export interface OrdinalRange {
  from: number;
  to: number;
}

/** A condition to append to a WHERE clause (it begins with ` AND `, or is empty), with its parameters. */
export interface SqlCondition {
  sql: string;
  parameters: SqlParameter[];
}

let calls = 0;

/** `path` (e.g. `c.ordinal`) in none of the gaps: empty when there are none. */
export function outsideGaps(path: string, gaps: readonly OrdinalRange[]): SqlCondition {
  const { ranges, parameters } = rangeConditions(path, gaps);
  return { sql: ranges.map((range) => ` AND NOT ${range}`).join(''), parameters };
}

/** `path` in one of the gaps: nothing is in none. */
export function withinGaps(path: string, gaps: readonly OrdinalRange[]): SqlCondition {
  const { ranges, parameters } = rangeConditions(path, gaps);
  return { sql: ranges.length === 0 ? ' AND false' : ` AND (${ranges.join(' OR ')})`, parameters };
}

function rangeConditions(
  path: string,
  gaps: readonly OrdinalRange[],
): { ranges: string[]; parameters: SqlParameter[] } {
  calls = (calls + 1) % 1_000_000;
  const prefix = `@gaps${calls}_`;
  return {
    ranges: gaps.map((_, index) => `(${path} >= ${prefix}from${index} AND ${path} < ${prefix}to${index})`),
    parameters: gaps.flatMap((gap, index) => [
      { name: `${prefix}from${index}`, value: gap.from },
      { name: `${prefix}to${index}`, value: gap.to },
    ]),
  };
}
