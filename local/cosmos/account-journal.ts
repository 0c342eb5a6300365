// The local Cosmos DB's journal records: one per stored or removed database, container or document (the changed
// resource only, never its container), replayed in order on top of the last snapshot at start-up.
import { z } from 'zod';

import type { ReplayedChange, ResourceChange } from './cosmosdb-server-observer.js';

const levelSchema = z.enum(['database', 'container', 'document']);
const parentsSchema = z.array(z.string()).max(2);

export const accountJournalRecordSchema = z.discriminatedUnion('op', [
  z.object({
    op: z.literal('store'),
    level: levelSchema,
    parents: parentsSchema,
    resource: z.looseObject({ id: z.string(), _rid: z.string() }),
    ridCount: z.number().int().nonnegative(),
  }),
  z.object({ op: z.literal('remove'), level: levelSchema, parents: parentsSchema, rid: z.string() }),
]);

export type AccountJournalRecord = z.infer<typeof accountJournalRecordSchema>;

export function toJournalRecord(change: ResourceChange): AccountJournalRecord {
  const { level, parents } = change;
  return change.kind === 'stored'
    ? { op: 'store', level, parents: [...parents], resource: change.resource, ridCount: change.ridCount }
    : { op: 'remove', level, parents: [...parents], rid: change.resource._rid };
}

export function toReplayedChange(record: AccountJournalRecord): ReplayedChange {
  return record.op === 'store'
    ? {
        kind: 'stored',
        level: record.level,
        parents: record.parents,
        resource: record.resource,
        ridCount: record.ridCount,
      }
    : { kind: 'removed', level: record.level, parents: record.parents, rid: record.rid };
}
