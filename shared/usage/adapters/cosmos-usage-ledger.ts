// The usage ledger in Cosmos DB's `usage` container (partition /userId): the record of each call created once (a
// second create of its id is a 409), and only the writer that created it adds it to the counters, by patch `incr`.
import type { Container, PatchOperation } from '@azure/cosmos';
import { z } from 'zod';
import { mapBounded } from '../../bounded-parallel.js';
import {
  cosmosFailure,
  cosmosStatus,
  deleteItem,
  queryItems,
  readItem,
} from '../../cosmos/adapters/cosmos-items.js';
import { patchItem } from '../../cosmos/adapters/cosmos-patch.js';
import {
  NO_USAGE,
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

/** A counter's id: `day-2026-11-26`, `month-2026-11`, `conversation-<sessionId>`. */
export function counterId(type: CounterType, key: string): string {
  return `${type}-${key}`;
}

export function createCosmosUsageLedger(container: Container): UsageLedger {
  async function addToCounter(record: UsageRecord, type: CounterType, key: string): Promise<void> {
    const side = isBackground(record.kind) ? 'background' : 'turns';
    const figures = recordFigures(record);
    const operations: PatchOperation[] = [
      ...Object.entries(figures).map(([field, value]): PatchOperation => ({
        op: 'incr',
        path: `/${side}/${field}`,
        value,
      })),
      { op: 'set', path: '/updatedAt', value: record.at },
    ];
    const id = counterId(type, key);
    const what = `the usage counter ${id}`;
    for (let attempt = 0; attempt < 3; attempt++) {
      if ((await patchItem(container, id, record.userId, operations, undefined, what)) === 'patched') return;
      // The first call of the day, month or conversation creates its counter; a racing first call patches it.
      const counter: UsageCounter = {
        id,
        userId: record.userId,
        type,
        key,
        turns: side === 'turns' ? figures : NO_USAGE,
        background: side === 'background' ? figures : NO_USAGE,
        updatedAt: record.at,
      };
      try {
        await container.items.create(counter);
        return;
      } catch (error) {
        if (cosmosStatus(error) !== 409) throw cosmosFailure(`creating ${what}`, error);
      }
    }
    throw cosmosFailure(`updating ${what}`, new Error('it kept appearing and disappearing'));
  }

  return {
    async record(record) {
      try {
        await container.items.create(record);
      } catch (error) {
        if (cosmosStatus(error) === 409) return false;
        throw cosmosFailure('recording a model call', error);
      }
      const counters: [CounterType, string][] = [
        ['day', record.day],
        ['month', record.day.slice(0, 7)],
      ];
      if (record.sessionId !== undefined) counters.push(['conversation', record.sessionId]);
      await Promise.all(counters.map(([type, key]) => addToCounter(record, type, key)));
      return true;
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
      await deleteItem(
        container,
        counterId('conversation', sessionId),
        userId,
        'a conversation usage counter',
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
