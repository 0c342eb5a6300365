// The usage ledger in Cosmos DB's `usage` container (partition /userId): each call's record and its counters (day,
// month, conversation) in one transactional batch, so they are written together or not at all; a record already
// stored fails the batch (409) and is counted once. A deleted conversation leaves a nameless mark (detachedMarkId).
import { createHash } from 'node:crypto';
import type { Container, JSONObject, OperationInput, PatchOperation } from '@azure/cosmos';
import { z } from 'zod';
import { mapBounded } from '../../bounded-parallel.js';
import { cosmosFailure, deleteItem, queryItems, readItem } from '../../cosmos/adapters/cosmos-items.js';
import { patchItem } from '../../cosmos/adapters/cosmos-patch.js';
import { UnsafeItemIdError, unsafeReason } from '../../cosmos/adapters/guarded-item.js';
import {
  COUNTER_TYPES,
  NO_USAGE,
  USAGE_RECORD_TTL_SECONDS,
  usageCounterSchema,
  usageFiguresSchema,
  usageRecordSchema,
  type CounterType,
  type UsageCounter,
  type UsageRecord,
} from '../contracts.js';
import { isBackground, recordFigures, sumFigures } from '../usage-figures.js';
import type { UsageLedger } from '../usage-ledger.js';

/** Records detached at once when a conversation is deleted. */
const DETACH_PARALLELISM = 16;

/**
 * Batches tried for one record: each retry follows a counter found missing, or created or detached meanwhile. Each of
 * the three counters can fail a batch twice (missing, then made by another instance first), a detach once more.
 */
const RECORD_ATTEMPTS = 10;

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

/** How the batch writes a counter: patched when it exists; created (first call of its day, month, conversation). */
type CounterWrite = 'patch' | 'create';

export function createCosmosUsageLedger(container: Container): UsageLedger {
  /**
   * The record and its counters in one transactional batch (the partition is the user's): all written, or none.
   * The create of the record comes first, so a call recorded before fails the batch (409) and counts nothing twice.
   */
  function recordOperations(
    record: UsageRecord,
    writes: ReadonlyMap<CounterType, CounterWrite>,
  ): OperationInput[] {
    const side = isBackground(record.kind) ? 'background' : 'turns';
    const figures = recordFigures(record);
    // Plain JSON: an optional field of the record is absent, never undefined.
    const operations: OperationInput[] = [
      { operationType: 'Create', resourceBody: record as unknown as JSONObject },
    ];
    for (const [type, key] of countersOf(record)) {
      const id = counterId(type, key);
      if (writes.get(type) === 'create') {
        const counter: UsageCounter = {
          id,
          userId: record.userId,
          type,
          key,
          turns: side === 'turns' ? figures : NO_USAGE,
          background: side === 'background' ? figures : NO_USAGE,
          updatedAt: record.at,
        };
        operations.push({ operationType: 'Create', resourceBody: counter });
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
        ...Object.entries(figures)
          .filter(([, value]) => value !== 0)
          .map(([field, value]): PatchOperation => ({ op: 'incr', path: `/${side}/${field}`, value })),
        { op: 'set', path: '/updatedAt', value: record.at },
      ];
      operations.push({ operationType: 'Patch', id, resourceBody: { operations: patch } });
    }
    return operations;
  }

  return {
    async record(record) {
      assertSafeIds(record);
      let stored = record;
      const writes = new Map<CounterType, CounterWrite>();
      for (let attempt = 0; attempt < RECORD_ATTEMPTS; attempt++) {
        const operations = recordOperations(stored, writes);
        const failed = await runBatch(container, operations, stored.userId);
        if (failed === undefined) return true;
        if (failed.index === 0 && failed.statusCode === 409) return false;
        const counter = counterAt(operations, failed.index);
        if (counter === undefined) throw cosmosFailure('recording a model call', batchError(failed));
        if (failed.statusCode === 404 && writes.get(counter) !== 'create') writes.set(counter, 'create');
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
        else throw cosmosFailure('recording a model call', batchError(failed));
      }
      throw cosmosFailure(
        'recording a model call',
        new Error('its counters kept appearing and disappearing'),
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
          query: "SELECT * FROM c WHERE c.type = 'call' AND c.day >= @from AND c.day <= @to",
          parameters: [
            { name: '@from', value: fromDay },
            { name: '@to', value: toDay },
          ],
        },
        userId,
        'the usage records',
        usageRecordSchema,
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
          query: "SELECT c.id FROM c WHERE c.type = 'call' AND c.sessionId = @s",
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

/** The counters a record adds to: its day, its month, and its conversation when it has one. */
function countersOf(record: UsageRecord): [CounterType, string][] {
  const counters: [CounterType, string][] = [
    ['day', record.day],
    ['month', record.day.slice(0, 7)],
  ];
  if (record.sessionId !== undefined) counters.push(['conversation', record.sessionId]);
  return counters;
}

function withoutConversation(record: UsageRecord): UsageRecord {
  const { sessionId: _sessionId, turnId: _turnId, ...rest } = record;
  return rest;
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
    throw cosmosFailure('recording a model call', error);
  }
  const results = response.result ?? [];
  const index = results.findIndex((result) => result.statusCode >= 400 && result.statusCode !== 424);
  if (index >= 0) return { index, statusCode: results[index]!.statusCode };
  if (response.code !== undefined && response.code >= 300)
    throw cosmosFailure('recording a model call', new Error(`the batch answered ${response.code}`));
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
