// The transactional batch that records a job's calls: its record's create (or the job folded into it) and its
// counters' creates or increments, and which counter an operation that failed it writes. Pure.
import { createHash } from 'node:crypto';
import type { JSONObject, OperationInput, PatchOperation } from '@azure/cosmos';
import {
  COUNTER_TYPES,
  type CounterType,
  type UsageCounter,
  type UsageFigures,
  type UsageRecord,
} from '../contracts.js';
import { sidesOf } from '../usage-figures.js';

/** Cosmos DB applies at most this many operations in one patch. */
const PATCH_OPERATIONS_LIMIT = 10;

/** A counter's id: `day-2026-11-26`, `month-2026-11`, `conversation-<sessionId>`. */
export function counterId(type: CounterType, key: string): string {
  return `${type}-${key}`;
}

/**
 * The id of the mark a deleted conversation leaves in its user's usage: a hash, so no item names the conversation
 * once it is deleted. A call that ends after the delete finds it and is recorded without the conversation.
 */
export function detachedMarkId(sessionId: string): string {
  return `detached-${createHash('sha256').update(sessionId).digest('hex').slice(0, 40)}`;
}

/** How the batch writes the record: created (its first job), or the job folded into the one stored. */
export type RecordWrite = 'create' | 'fold';

/**
 * How the batch writes a counter: patched when it exists; created (first call of its month, conversation); or, for a
 * month counted before it kept its days' tokens, given them from now on.
 */
export type CounterWrite = 'patch' | 'create' | 'days';

/**
 * The record and its counters in one transactional batch (the partition is the user's): all written, or none. The
 * record's write comes first: a job recorded before fails the batch (its create 409, or its fold's condition 412)
 * and counts nothing twice. A record may hold several jobs (a turn's step's, handed to a worker, and the worker's).
 */
export function recordOperations(
  record: UsageRecord,
  recordWrite: RecordWrite,
  writes: ReadonlyMap<CounterType, CounterWrite>,
): OperationInput[] {
  const jobs = Object.entries(record.jobs);
  const sides = sidesOf(jobs.flatMap(([, parts]) => parts));
  // Plain JSON: an optional field of the record is absent, never undefined.
  const operations: OperationInput[] = [
    recordWrite === 'create'
      ? { operationType: 'Create', resourceBody: record as unknown as JSONObject }
      : {
          operationType: 'Patch',
          id: record.id,
          resourceBody: {
            operations: jobs.map(([job, parts]): PatchOperation => ({
              op: 'add',
              path: `/jobs/${pointerSegment(job)}`,
              value: parts,
            })),
            condition: `FROM c WHERE ${jobs.map(([job]) => `NOT IS_DEFINED(c.jobs[${JSON.stringify(job)}])`).join(' AND ')}`,
          },
        },
  ];
  const tokens = dayTokens(sides);
  const day = record.at.slice(8, 10);
  for (const [type, key] of countersOf(record)) {
    const id = counterId(type, key);
    const write = writes.get(type) ?? 'patch';
    if (write === 'create') {
      const counter: UsageCounter = {
        id,
        userId: record.userId,
        type,
        key,
        ...sides,
        ...(type === 'month' ? { days: { [day]: tokens } } : {}),
        updatedAt: record.at,
      };
      operations.push({ operationType: 'Create', resourceBody: counter as unknown as JSONObject });
      // A conversation's counter is created only while it is not deleted: its mark, if any, fails this create.
      if (type === 'conversation' && record.sessionId !== undefined) {
        const mark = { id: detachedMarkId(record.sessionId), userId: record.userId, type: 'probe' };
        operations.push(
          { operationType: 'Create', resourceBody: mark },
          { operationType: 'Delete', id: mark.id },
        );
      }
      continue;
    }
    // A figure of 0 adds nothing (every counter holds all its figures from its create): it is not sent.
    const patch: PatchOperation[] = [
      ...increments('turns', sides.turns),
      ...increments('background', sides.background),
      { op: 'set', path: '/updatedAt', value: record.at },
    ];
    // A month's days are patched only where they are (412 otherwise), given only where they are not.
    let condition: string | undefined;
    if (type === 'month' && write === 'patch') {
      patch.push({ op: 'incr', path: `/days/${day}`, value: tokens });
      condition = 'FROM c WHERE IS_DEFINED(c.days)';
    } else if (type === 'month') {
      patch.push(
        { op: 'set', path: '/days', value: { [day]: tokens } },
        { op: 'set', path: '/daysSince', value: record.at },
      );
      condition = 'FROM c WHERE NOT IS_DEFINED(c.days)';
    }
    for (let at = 0; at < patch.length; at += PATCH_OPERATIONS_LIMIT) {
      const chunk = patch.slice(at, at + PATCH_OPERATIONS_LIMIT);
      operations.push({
        operationType: 'Patch',
        id,
        resourceBody: condition === undefined ? { operations: chunk } : { operations: chunk, condition },
      });
    }
  }
  return operations;
}

/** The counters a record adds to: its month (with its day's tokens), and its conversation when it has one. */
export function countersOf(record: UsageRecord): [CounterType, string][] {
  const counters: [CounterType, string][] = [['month', record.at.slice(0, 7)]];
  if (record.sessionId !== undefined) counters.push(['conversation', record.sessionId]);
  return counters;
}

/** The tokens a day's quota counts: input and output, of every kind. */
function dayTokens(sides: { turns: UsageFigures; background: UsageFigures }): number {
  return (
    sides.turns.inputTokens +
    sides.turns.outputTokens +
    sides.background.inputTokens +
    sides.background.outputTokens
  );
}

export function withoutConversation(record: UsageRecord): UsageRecord {
  const { sessionId: _sessionId, turnId: _turnId, ...rest } = record;
  return rest;
}

/** A property name as one segment of a patch's JSON Pointer path. */
function pointerSegment(name: string): string {
  return name.replaceAll('~', '~0').replaceAll('/', '~1');
}

/** The increments of a side's figures, those of 0 left out. */
function increments(side: 'turns' | 'background', figures: UsageFigures): PatchOperation[] {
  return Object.entries(figures)
    .filter(([, value]) => value !== 0)
    .map(([field, value]): PatchOperation => ({ op: 'incr', path: `/${side}/${field}`, value }));
}

/** The counter an operation of the batch writes (its create, patch, or the conversation's mark probe). */
export function counterAt(operations: readonly OperationInput[], index: number): CounterType | undefined {
  for (let i = index; i >= 1; i--) {
    const operation = operations[i];
    const id =
      operation?.operationType === 'Create'
        ? (operation.resourceBody as { id?: unknown }).id
        : operation && 'id' in operation
          ? operation.id
          : undefined;
    if (typeof id !== 'string') continue;
    const type = COUNTER_TYPES.find((counter) => id.startsWith(`${counter}-`));
    if (type !== undefined) return type;
  }
  return undefined;
}

export function isMark(operations: readonly OperationInput[], index: number): boolean {
  const operation = operations[index];
  return (
    operation?.operationType === 'Create' &&
    String((operation.resourceBody as { id?: unknown }).id).startsWith('detached-')
  );
}
