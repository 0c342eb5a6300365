// The usage ledger in Cosmos DB's `usage` container (partition /userId): a turn's or a job's record and its counters
// (the month's, with its days' tokens, and the conversation's) in one transactional batch, all or nothing; a job
// already in its record fails the batch (409 or 412) and is counted once. A deleted conversation leaves a mark.
import type { Container, OperationInput } from '@azure/cosmos';
import { z } from 'zod';
import { mapBounded } from '../../bounded-parallel.js';
import { cosmosFailure, deleteItem, queryItems, readItem } from '../../cosmos/adapters/cosmos-items.js';
import { patchItem } from '../../cosmos/adapters/cosmos-patch.js';
import { UnsafeItemIdError, unsafeReason } from '../../cosmos/adapters/guarded-item.js';
import {
  callRecordSchema,
  USAGE_RECORD_TTL_SECONDS,
  usageCounterSchema,
  usageFiguresSchema,
  usageRecordSchema,
  type CounterType,
  type UsageRecord,
} from '../contracts.js';
import { sumFigures } from '../usage-figures.js';
import type { UsageLedger } from '../usage-ledger.js';
import {
  counterAt,
  counterId,
  detachedMarkId,
  isMark,
  recordOperations,
  withoutConversation,
  type CounterWrite,
  type RecordWrite,
} from './usage-batch.js';

/** Records detached at once when a conversation is deleted. */
const DETACH_PARALLELISM = 16;

/**
 * Batches tried for one record: each retry follows a record or counter found missing, or created or detached
 * meanwhile. The record can fail a batch twice (stored already, then gone), each counter twice (missing, then made by
 * another instance first), a month without its days twice more, a detach once more.
 */
const RECORD_ATTEMPTS = 12;

/** Both kinds of record: a turn's or a job's, and a single call's as stored before calls were folded by job. */
const storedRecordSchema = z.union([usageRecordSchema, callRecordSchema]);

export function createCosmosUsageLedger(container: Container): UsageLedger {
  return {
    async record(record, first = 'create') {
      assertSafeIds(record);
      let stored = record;
      let recordWrite: RecordWrite = first;
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
