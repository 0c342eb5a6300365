// The JSON layout of the durable driver's data file and its check on load: every instance record with its
// history and undelivered messages, so a restart can resume each instance by replay.
import { z } from 'zod';
import type { InstanceRecord } from './instance-store.js';

const INSTANCE_FILE_FORMAT = 'local-durable-instances';
const INSTANCE_FILE_VERSION = 1;

const timestamp = z.iso.datetime();
const seq = z.number().int().nonnegative();

const failureSchema = z.object({ name: z.string(), message: z.string(), stack: z.string().optional() });

const historyEventSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('orchestratorStarted'), at: timestamp }),
  z.object({ type: z.literal('executionStarted') }),
  z.object({
    type: z.literal('taskScheduled'),
    seq,
    kind: z.enum(['activity', 'timer']),
    name: z.string(),
  }),
  z.object({ type: z.literal('taskCompleted'), seq, result: z.unknown().optional() }),
  z.object({ type: z.literal('taskFailed'), seq, failure: failureSchema }),
  z.object({ type: z.literal('timerFired'), seq }),
  z.object({ type: z.literal('eventRaised'), name: z.string(), data: z.unknown().optional() }),
]);

export const instanceRecordSchema = z.object({
  instanceId: z.string().min(1),
  executionId: z.string().min(1),
  name: z.string().min(1),
  // JSON drops undefined values: an instance started without input has none.
  input: z.unknown().optional(),
  runtimeStatus: z.enum(['Pending', 'Running', 'Completed', 'ContinuedAsNew', 'Failed', 'Terminated']),
  output: z.unknown().optional(),
  customStatus: z.unknown().optional(),
  failure: failureSchema.optional(),
  createdTime: timestamp,
  lastUpdatedTime: timestamp,
  history: z.array(historyEventSchema),
  inbox: z.array(historyEventSchema),
});

export const instanceFileSchema = z.object({
  format: z.literal(INSTANCE_FILE_FORMAT),
  version: z.literal(INSTANCE_FILE_VERSION),
  savedAt: timestamp,
  instances: z.array(instanceRecordSchema),
});

export type InstanceFile = z.infer<typeof instanceFileSchema>;

/** One journal record: an instance stored (created or changed), or instances purged. */
export const instanceJournalRecordSchema = z.discriminatedUnion('op', [
  z.object({ op: z.literal('put'), record: instanceRecordSchema }),
  z.object({ op: z.literal('delete'), instanceIds: z.array(z.string()) }),
]);

export type InstanceJournalRecord = z.infer<typeof instanceJournalRecordSchema>;

/** The file's JSON text in pieces, one per instance, for writing in chunks (the records are copied by the caller). */
export function* instanceFilePieces(records: readonly InstanceRecord[], savedAt: Date): Generator<string> {
  yield `{"format":"${INSTANCE_FILE_FORMAT}","version":${INSTANCE_FILE_VERSION},"savedAt":"${savedAt.toISOString()}","instances":[`;
  for (const [index, record] of records.entries()) yield `${index > 0 ? ',' : ''}${JSON.stringify(record)}`;
  yield ']}';
}

/** The records of a checked file; throws when it holds something the driver could not have written. */
export function fromInstanceFile(file: InstanceFile): InstanceRecord[] {
  const seen = new Set<string>();
  return file.instances.map((instance) => {
    if (seen.has(instance.instanceId)) {
      throw new Error(`instance '${instance.instanceId}' appears more than once`);
    }
    seen.add(instance.instanceId);
    return fromSavedRecord(instance);
  });
}

/** A checked record as the driver keeps it (JSON dropped its undefined and null-defaulted fields). */
export function fromSavedRecord(instance: z.infer<typeof instanceRecordSchema>): InstanceRecord {
  return {
    ...instance,
    input: instance.input,
    output: instance.output ?? null,
    customStatus: instance.customStatus ?? null,
  };
}
