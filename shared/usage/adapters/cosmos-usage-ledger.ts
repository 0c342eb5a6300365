// The usage ledger in Cosmos DB's `usage` container (partition /userId): a turn's or a job's record and its counters
// (the month's, with its days' tokens, and the conversation's) in one transactional batch, all or nothing; a job
// already in its record fails the batch (409 or 412) and is counted once. A deleted conversation leaves a mark.
import { createHash } from 'node:crypto';
import type { Container, JSONObject, OperationInput, PatchOperation } from '@azure/cosmos';
import { z } from 'zod';
import { mapBounded } from '../../bounded-parallel.js';
import { cosmosFailure, deleteItem, queryItems, readItem } from '../../cosmos/adapters/cosmos-items.js';
import { patchItem } from '../../cosmos/adapters/cosmos-patch.js';
import { UnsafeItemIdError, unsafeReason } from '../../cosmos/adapters/guarded-item.js';
import {
  callRecordSchema,
  COUNTER_TYPES,
  USAGE_RECORD_TTL_SECONDS,
  usageCounterSchema,
  usageFiguresSchema,
  usageRecordSchema,
  type CounterType,
  type UsageCounter,
  type UsageFigures,
  type UsagePart,
  type UsageRecord,
} from '../contracts.js';
import { sidesOf, sumFigures } from '../usage-figures.js';
import type { UsageLedger } from '../usage-ledger.js';

/** Records detached at once when a conversation is deleted. */
const DETACH_PARALLELISM = 16;

/**
 * Batches tried for one record: each retry follows a record or counter found missing, or created or detached
 * meanwhile. The record can fail a batch twice (stored already, then gone), each counter twice (missing, then made by
 * another instance first), a month without its days twice more, a detach once more.
 */
const RECORD_ATTEMPTS = 12;

/** Cosmos DB applies at most this many operations in one patch. */
const PATCH_OPERATIONS_LIMIT = 10;

/** Both kinds of record: a turn's or a job's, and a single call's as stored before calls were folded by job. */
const storedRecordSchema = z.union([usageRecordSchema, callRecordSchema]);

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
type RecordWrite = 'create' | 'fold';

/**
 * How the batch writes a counter: patched when it exists; created (first call of its month, conversation); or, for a
 * month counted before it kept its days' tokens, given them from now on.
 */
type CounterWrite = 'patch' | 'create' | 'days';

export function createCosmosUsageLedger(container: Container): UsageLedger {
  /**
   * The record and its counters in one transactional batch (the partition is the user's): all written, or none. The
   * record's write comes first: a job recorded before fails the batch (its create 409, or its fold's condition 412)
   * and counts nothing twice.
   */
  function recordOperations(
    record: UsageRecord,
    recordWrite: RecordWrite,
    writes: ReadonlyMap<CounterType, CounterWrite>,
  ): OperationInput[] {
    const [job, parts] = soleJob(record);
    const sides = sidesOf(parts);
    // Plain JSON: an optional field of the record is absent, never undefined.
    const operations: OperationInput[] = [
      recordWrite === 'create'
        ? { operationType: 'Create', resourceBody: record as unknown as JSONObject }
        : {
            operationType: 'Patch',
            id: record.id,
            resourceBody: {
              operations: [{ op: 'add', path: `/jobs/${pointerSegment(job)}`, value: parts as JSONObject[] }],
              condition: `FROM c WHERE NOT IS_DEFINED(c.jobs[${JSON.stringify(job)}])`,
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

  return {
    async record(record) {
      assertSafeIds(record);
      let stored = record;
      let recordWrite: RecordWrite = 'create';
      const writes = new Map<CounterType, CounterWrite>();
      for (let attempt = 0; attempt < RECORD_ATTEMPTS; attempt++) {
        const operations = recordOperations(stored, recordWrite, writes);
        const failed = await runBatch(container, operations, stored.userId);
        if (failed === undefined) return true;
        if (failed.index === 0) {
          // Another job of the turn stored the record first: this one is folded into it.
          if (failed.statusCode === 409 && recordWrite === 'create') recordWrite = 'fold';
          // The record holds this job already: it ran before, and was counted then.
          else if (failed.statusCode === 412 && recordWrite === 'fold') return false;
          // Gone since (its time to live passed): this job starts it again.
          else if (failed.statusCode === 404 && recordWrite === 'fold') recordWrite = 'create';
          else throw cosmosFailure('recording model calls', batchError(failed));
          continue;
        }
        const counter = counterAt(operations, failed.index);
        if (counter === undefined) throw cosmosFailure('recording model calls', batchError(failed));
        if (failed.statusCode === 404 && writes.get(counter) !== 'create') writes.set(counter, 'create');
        // A month counted before it kept its days' tokens gets them now; one that got them meanwhile is patched.
        else if (failed.statusCode === 412 && counter === 'month')
          writes.set(counter, writes.get(counter) === 'days' ? 'patch' : 'days');
        else if (
          failed.statusCode === 409 &&
          counter === 'conversation' &&
          isMark(operations, failed.index)
        ) {
          // Deleted: its spend stays in the user's totals, no longer tied to it, as detachConversation leaves it.
          stored = withoutConversation(stored);
          writes.delete('conversation');
        } else if (failed.statusCode === 409 && writes.get(counter) === 'create')
          writes.set(counter, 'patch');
        else throw cosmosFailure('recording model calls', batchError(failed));
      }
      throw cosmosFailure(
        'recording model calls',
        new Error('its record and counters kept appearing and disappearing'),
      );
    },

    async counter(userId, type, key) {
      const id = counterId(type, key);
      return (await readItem(container, id, userId, `the usage counter ${id}`, usageCounterSchema))?.resource;
    },

    async conversations(userId, sessionIds) {
      if (sessionIds.length === 0) return [];
      return queryItems(
        container,
        {
          query: "SELECT * FROM c WHERE c.type = 'conversation' AND ARRAY_CONTAINS(@keys, c.key)",
          parameters: [{ name: '@keys', value: [...sessionIds] }],
        },
        userId,
        'the conversations’ usage counters',
        usageCounterSchema,
      );
    },

    records(userId, fromDay, toDay) {
      return queryItems(
        container,
        {
          query: "SELECT * FROM c WHERE c.type IN ('usage', 'call') AND c.day >= @from AND c.day <= @to",
          parameters: [
            { name: '@from', value: fromDay },
            { name: '@to', value: toDay },
          ],
        },
        userId,
        'the usage records',
        storedRecordSchema,
      );
    },

    async detachConversation(userId, sessionId) {
      // In this order: a call recorded before the counter goes is among the records detached below; one recorded
      // after finds no counter, tries to create it, and meets the mark.
      const mark: DetachedMark = {
        id: detachedMarkId(sessionId),
        userId,
        type: 'detached-conversation',
        ttl: USAGE_RECORD_TTL_SECONDS,
      };
      try {
        await container.items.upsert(mark);
      } catch (error) {
        throw cosmosFailure('marking a conversation detached from its usage', error);
      }
      await deleteItem(
        container,
        counterId('conversation', sessionId),
        userId,
        'a conversation usage counter',
      );
      const records = await queryItems(
        container,
        {
          query: "SELECT c.id FROM c WHERE c.type IN ('usage', 'call') AND c.sessionId = @s",
          parameters: [{ name: '@s', value: sessionId }],
        },
        userId,
        "the conversation's usage records",
        z.object({ id: z.string() }),
      );
      await mapBounded(records, DETACH_PARALLELISM, ({ id }) =>
        patchItem(
          container,
          id,
          userId,
          [
            { op: 'remove', path: '/sessionId' },
            { op: 'remove', path: '/turnId' },
          ],
          undefined,
          'a usage record',
        ),
      );
      return records.length;
    },

    async lifetime(userId) {
      const months = await queryItems(
        container,
        { query: "SELECT c.turns, c.background FROM c WHERE c.type = 'month'" },
        userId,
        'the monthly usage counters',
        z.object({ turns: usageFiguresSchema, background: usageFiguresSchema }),
      );
      return {
        turns: sumFigures(months.map((month) => month.turns)),
        background: sumFigures(months.map((month) => month.background)),
      };
    },
  };
}

/** What a deleted conversation leaves in its user's usage partition: no figures, no name, gone with its records. */
interface DetachedMark {
  id: string;
  userId: string;
  type: 'detached-conversation';
  ttl: number;
}

/** The counters a record adds to: its month (with its day's tokens), and its conversation when it has one. */
function countersOf(record: UsageRecord): [CounterType, string][] {
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

function withoutConversation(record: UsageRecord): UsageRecord {
  const { sessionId: _sessionId, turnId: _turnId, ...rest } = record;
  return rest;
}

/** The one job a record to write holds, and its calls. */
function soleJob(record: UsageRecord): [string, UsagePart[]] {
  const jobs = Object.entries(record.jobs);
  if (jobs.length !== 1) throw new Error(`A usage record is written one job at a time, not ${jobs.length}.`);
  return jobs[0]!;
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
function counterAt(operations: readonly OperationInput[], index: number): CounterType | undefined {
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

function isMark(operations: readonly OperationInput[], index: number): boolean {
  const operation = operations[index];
  return (
    operation?.operationType === 'Create' &&
    String((operation.resourceBody as { id?: unknown }).id).startsWith('detached-')
  );
}

interface FailedOperation {
  index: number;
  statusCode: number;
}

/**
 * Runs a transactional batch in the partition; the operation that failed it, or undefined when all were applied.
 * The answers carry no documents (the SDK's contentResponseOnWriteEnabled: false).
 */
async function runBatch(
  container: Container,
  operations: OperationInput[],
  partitionKey: string,
): Promise<FailedOperation | undefined> {
  let response;
  try {
    response = await container.items.batch(operations, partitionKey, {
      contentResponseOnWriteEnabled: false,
    });
  } catch (error) {
    throw cosmosFailure('recording model calls', error);
  }
  const results = response.result ?? [];
  const index = results.findIndex((result) => result.statusCode >= 400 && result.statusCode !== 424);
  if (index >= 0) return { index, statusCode: results[index]!.statusCode };
  if (response.code !== undefined && response.code >= 300)
    throw cosmosFailure('recording model calls', new Error(`the batch answered ${response.code}`));
  return undefined;
}

function batchError(failed: FailedOperation): Error {
  return new Error(`operation ${failed.index} of the batch answered ${failed.statusCode}`);
}

/** A batch names its items in its body, not in a URL, but their ids keep the same closed format. */
function assertSafeIds(record: UsageRecord): void {
  for (const [what, value] of [
    ['item id', record.id],
    ['partition key', record.userId],
    ['item id', record.sessionId],
  ] as const) {
    if (value === undefined) continue;
    const reason = unsafeReason(value);
    if (reason !== undefined) throw new UnsafeItemIdError(what, value, reason);
  }
}
