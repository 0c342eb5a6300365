// GET /api/usage/users/{userId}: the caller's tokens and cost over a range of UTC days, grouped by day, conversation
// or model, with the background spend apart. It reads the range's records (one single-partition query), each a turn's
// or a background job's calls by kind and model.
import { ValidationError } from '../errors.js';
import {
  MAX_USAGE_RANGE_DAYS,
  NO_USAGE,
  type UsageFigures,
  type UsageGroup,
  type UsageQuery,
  type UsageRecord,
  type UsageReport,
} from './contracts.js';
import { addFigures, isBackground, partFigures, partsOf } from './usage-figures.js';
import type { UsageLedger } from './usage-ledger.js';

const DAY_MS = 24 * 60 * 60 * 1000;

export async function usageReport(
  ledger: Pick<UsageLedger, 'records'>,
  userId: string,
  query: UsageQuery,
  now: Date = new Date(),
): Promise<UsageReport> {
  const to = query.to ?? now.toISOString().slice(0, 10);
  const from = query.from ?? `${to.slice(0, 7)}-01`;
  if (from > to)
    throw new ValidationError(`from (${from}) is after to (${to}).`, [
      { path: 'from', message: 'is after to' },
    ]);
  const days = (Date.parse(`${to}T00:00:00Z`) - Date.parse(`${from}T00:00:00Z`)) / DAY_MS + 1;
  if (days > MAX_USAGE_RANGE_DAYS)
    throw new ValidationError(
      `The range covers ${days} days; ask for at most ${MAX_USAGE_RANGE_DAYS} at a time.`,
    );
  const records = await ledger.records(userId, from, to);
  return { userId, from, to, groupBy: query.groupBy, currency: 'USD', ...summarise(records, query.groupBy) };
}

/** The totals, the background by kind, and the groups (in key order) of some records. Pure. */
export function summarise(
  records: readonly UsageRecord[],
  groupBy: UsageQuery['groupBy'],
): Pick<UsageReport, 'turns' | 'background' | 'total' | 'backgroundByKind' | 'groups'> {
  let turns = NO_USAGE;
  let background = NO_USAGE;
  const backgroundByKind: Record<string, UsageFigures> = {};
  const groups = new Map<string, { turns: UsageFigures; background: UsageFigures }>();
  for (const record of records)
    for (const part of partsOf(record)) {
      const figures = partFigures(part);
      const key =
        groupBy === 'day' ? record.day : groupBy === 'model' ? part.model : (record.sessionId ?? '');
      const group = groups.get(key) ?? { turns: NO_USAGE, background: NO_USAGE };
      if (isBackground(part.kind)) {
        background = addFigures(background, figures);
        backgroundByKind[part.kind] = addFigures(backgroundByKind[part.kind] ?? NO_USAGE, figures);
        group.background = addFigures(group.background, figures);
      } else {
        turns = addFigures(turns, figures);
        group.turns = addFigures(group.turns, figures);
      }
      groups.set(key, group);
    }
  const list: UsageGroup[] = [...groups.entries()]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([key, group]) => ({ key, ...group, total: addFigures(group.turns, group.background) }));
  return { turns, background, total: addFigures(turns, background), backgroundByKind, groups: list };
}
