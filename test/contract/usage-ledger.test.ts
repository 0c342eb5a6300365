// The Cosmos DB usage ledger against the local Cosmos DB with the real @azure/cosmos client: a job's record and its
// counters in one request, all or nothing (a crash after the write, a job run again, a turn's jobs in one record,
// racing first calls), a deleted conversation's later calls apart, old per-call records read, the quota reads.
import { randomUUID } from 'node:crypto';
import type { Container, CosmosClient } from '@azure/cosmos';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createLocalCosmosClient,
  provisionCosmos,
  startLocalCosmos,
  type LocalCosmos,
} from '../../local/cosmos/local-cosmos.js';
import { COSMOS_DATABASE, cosmosContainers } from '../../shared/app/cosmos-containers.js';
import { createCosmosUsageLedger } from '../../shared/usage/adapters/cosmos-usage-ledger.js';
import {
  NO_USAGE,
  USAGE_CONTAINER,
  USAGE_RECORD_TTL_SECONDS,
  type UsageRecord,
} from '../../shared/usage/contracts.js';
import { CounterUsageReader } from '../../shared/usage/usage-reader.js';

let local: LocalCosmos;
let client: CosmosClient;
let container: Container;

beforeAll(async () => {
  local = await startLocalCosmos();
  client = createLocalCosmosClient(local);
  await provisionCosmos(client, COSMOS_DATABASE, cosmosContainers);
  container = client.database(COSMOS_DATABASE).container(USAGE_CONTAINER);
}, 60_000);

afterAll(async () => {
  client?.dispose();
  await local?.stop();
});

const DAY = '2026-11-26';

/** Job `job` of turn `turn-<n>` (or of no turn), with one call: a turn's round or, for an odd n, a summary. */
function call(userId: string, sessionId: string | undefined, n: number, job = `job-${n}`): UsageRecord {
  return {
    // As the recorder's: derived from the turn or job, never naming the conversation.
    id: `usage-${userId}-${n}`,
    userId,
    type: 'usage',
    ...(sessionId === undefined ? {} : { sessionId, turnId: `turn-${n}` }),
    day: DAY,
    at: `${DAY}T10:00:0${n % 10}.000Z`,
    jobs: {
      [job]: [
        {
          kind: n % 2 === 0 ? 'turn' : 'summary',
          model: 'm',
          calls: 1,
          inputTokens: 100,
          cachedInputTokens: 0,
          outputTokens: 10,
          reasoningTokens: 0,
          costUsd: 0.001,
          priced: true,
        },
      ],
    },
    ttl: USAGE_RECORD_TTL_SECONDS,
  };
}

const newUser = () => `user_${randomUUID().slice(0, 8)}`;

/**
 * The container as a process sees it that dies right after its first write reached Cosmos DB: the write is stored,
 * and whatever the process meant to do next is never done.
 */
function dyingAfterFirstWrite(real: Container): Container {
  let died = false;
  const die = <T>(result: T): T => {
    died = true;
    void result;
    throw new Error('the process died');
  };
  const items = new Proxy(real.items, {
    get(target, property, receiver) {
      const value: unknown = Reflect.get(target, property, receiver);
      if (typeof value !== 'function' || !['create', 'upsert', 'batch'].includes(String(property)))
        return value;
      return async (...args: unknown[]) => {
        if (died) throw new Error('the process is dead');
        return die(await (value as (...a: unknown[]) => Promise<unknown>).apply(target, args));
      };
    },
  });
  return new Proxy(real, {
    get(target, property, receiver) {
      if (property === 'items') return items;
      if (died && property === 'item') throw new Error('the process is dead');
      return Reflect.get(target, property, receiver) as unknown;
    },
  });
}

describe('the usage ledger in Cosmos DB', () => {
  it("records a job's calls and counts them in their month, its day, and their conversation with one request", async () => {
    const ledger = createCosmosUsageLedger(container);
    const userId = newUser();
    await ledger.record(call(userId, 's1', 0)); // the first call of the day, month and conversation
    local.resetStats();
    expect(await ledger.record(call(userId, 's1', 1))).toBe(true);
    expect(local.stats().byContainer).toEqual({ [`${USAGE_CONTAINER} item.batch`]: expect.anything() });
    expect(local.stats().requests).toBe(1);
    for (const [type, key] of [
      ['month', DAY.slice(0, 7)],
      ['conversation', 's1'],
    ] as const) {
      const counter = await ledger.counter(userId, type, key);
      expect(counter?.turns.calls, `${type} turns`).toBe(1);
      expect(counter?.background, `${type} background`).toMatchObject({ calls: 1, inputTokens: 100 });
    }
    const reader = new CounterUsageReader(ledger);
    expect(await reader.tokensOnDay(userId, new Date(`${DAY}T23:00:00Z`))).toBe(220);
    expect(await reader.costInMonth(userId, new Date(`${DAY}T23:00:00Z`))).toBeCloseTo(0.002, 9);
  });

  it('counts a job once when it is recorded again, whatever its counters', async () => {
    const ledger = createCosmosUsageLedger(container);
    const userId = newUser();
    const record = call(userId, 's1', 0);
    expect(await ledger.record(record)).toBe(true);
    expect(await ledger.record(structuredClone(record))).toBe(false);
    expect((await ledger.counter(userId, 'month', DAY.slice(0, 7)))?.turns.calls).toBe(1);
    expect((await ledger.counter(userId, 'conversation', 's1'))?.turns.calls).toBe(1);
  });

  it('leaves no call uncounted when the process dies right after writing it, and counts it once on the re-run', async () => {
    const userId = newUser();
    await createCosmosUsageLedger(container).record(call(userId, 's1', 2));
    const record = call(userId, 's1', 4);
    await expect(createCosmosUsageLedger(dyingAfterFirstWrite(container)).record(record)).rejects.toThrow();
    // The job runs again in another process: the call is recorded already, and counted in every counter.
    expect(await createCosmosUsageLedger(container).record(record)).toBe(false);
    const ledger = createCosmosUsageLedger(container);
    expect((await ledger.counter(userId, 'month', DAY.slice(0, 7)))?.turns.calls).toBe(2);
    expect((await ledger.counter(userId, 'conversation', 's1'))?.turns.calls).toBe(2);
  });

  it('folds the jobs of a turn into its one record with one request each, and counts a job run again once', async () => {
    const ledger = createCosmosUsageLedger(container);
    const userId = newUser();
    expect(await ledger.record(call(userId, 's1', 0, 'round:0'))).toBe(true);
    local.resetStats();
    // The turn's next round: its own job, in the same record (the record's create finds it, then the fold).
    const round = call(userId, 's1', 0, 'round:1');
    expect(await ledger.record(round)).toBe(true);
    const folding = local.stats().requests;
    // The round's activity run again, in another process: its job is in the record already, nothing is counted.
    expect(await createCosmosUsageLedger(container).record(structuredClone(round))).toBe(false);
    expect(folding).toBeLessThanOrEqual(2);
    const [record] = await ledger.records(userId, DAY, DAY);
    expect(Object.keys(record?.jobs ?? {})).toEqual(['round:0', 'round:1']);
    expect((await ledger.counter(userId, 'conversation', 's1'))?.turns.calls).toBe(2);
    expect((await ledger.counter(userId, 'month', DAY.slice(0, 7)))?.turns).toMatchObject({
      calls: 2,
      inputTokens: 200,
    });
  });

  it("writes a turn's round handed to a worker together with the worker's own job, each job counted once", async () => {
    const ledger = createCosmosUsageLedger(container);
    const userId = newUser();
    await ledger.record(call(userId, 's1', 8)); // the conversation's counter exists
    const round = call(userId, 's1', 0, 'round:0');
    const history = call(userId, 's1', 0, 'history');
    const handed: UsageRecord = { ...round, jobs: { ...round.jobs, ...history.jobs } };
    // The memory worker, usually later, folds first; before the record exists it creates it instead.
    local.resetStats();
    expect(await ledger.record(call(userId, 's1', 0, 'memory'), 'fold')).toBe(true);
    expect(local.stats().requests).toBe(2);
    local.resetStats();
    expect(await ledger.record(handed)).toBe(true);
    // Created by the memory worker first: the history worker's create finds it and folds both jobs in.
    expect(local.stats().requests).toBe(2);
    // The event delivered again, or the round recorded by its step run again: nothing is counted twice.
    expect(await ledger.record(structuredClone(handed), 'fold')).toBe(false);
    expect(await ledger.record(structuredClone(round), 'fold')).toBe(false);
    const records = (await ledger.records(userId, DAY, DAY)).filter((record) => record.turnId === 'turn-0');
    expect(records.map((record) => Object.keys(record.jobs).sort())).toEqual([
      ['history', 'memory', 'round:0'],
    ]);
    expect((await ledger.counter(userId, 'conversation', 's1'))?.turns.calls).toBe(4);
  });

  it("gives a month counted before its days their tokens from then on, and the daily quota the day's before", async () => {
    const ledger = createCosmosUsageLedger(container);
    const reader = new CounterUsageReader(ledger);
    const userId = newUser();
    // As counted before: a counter per day beside the month's.
    const figures = { ...NO_USAGE, calls: 1, inputTokens: 40, outputTokens: 2 };
    for (const [type, key] of [
      ['month', DAY.slice(0, 7)],
      ['day', DAY],
    ] as const)
      await container.items.create({
        id: `${type}-${key}`,
        userId,
        type,
        key,
        turns: figures,
        background: NO_USAGE,
        updatedAt: `${DAY}T08:00:00.000Z`,
      });
    expect(await ledger.record(call(userId, 's1', 0))).toBe(true);
    const month = await ledger.counter(userId, 'month', DAY.slice(0, 7));
    expect(month?.turns).toMatchObject({ calls: 2, inputTokens: 140 });
    expect(month?.days).toEqual({ [DAY.slice(8)]: 110 });
    expect(await reader.tokensOnDay(userId, new Date(`${DAY}T23:00:00Z`))).toBe(42 + 110);
    // The next job of the day patches the days now there.
    expect(await ledger.record(call(userId, 's1', 2))).toBe(true);
    expect(await reader.tokensOnDay(userId, new Date(`${DAY}T23:00:00Z`))).toBe(42 + 220);
    expect(await reader.tokensOnDay(userId, new Date(`${DAY.slice(0, 8)}27T01:00:00Z`))).toBe(0);
  });

  it('reads a record stored one per call before as a record of that call', async () => {
    const ledger = createCosmosUsageLedger(container);
    const userId = newUser();
    await container.items.create({
      id: 'call-1',
      userId,
      type: 'call',
      sessionId: 's1',
      turnId: 't1',
      kind: 'title',
      model: 'm',
      day: DAY,
      at: `${DAY}T09:00:00.000Z`,
      inputTokens: 7,
      cachedInputTokens: 0,
      outputTokens: 3,
      reasoningTokens: 0,
      costUsd: 0.002,
      priced: true,
      ttl: USAGE_RECORD_TTL_SECONDS,
    });
    const [record] = await ledger.records(userId, DAY, DAY);
    expect(record).toMatchObject({ type: 'usage', sessionId: 's1', turnId: 't1' });
    expect(Object.values(record?.jobs ?? {}).flat()).toEqual([
      expect.objectContaining({ kind: 'title', model: 'm', calls: 1, inputTokens: 7, costUsd: 0.002 }),
    ]);
    expect(await ledger.detachConversation(userId, 's1')).toBe(1);
  });

  it('counts every first call of a day, month or conversation racing from two instances', async () => {
    const userId = newUser();
    const [one, two] = [createCosmosUsageLedger(container), createCosmosUsageLedger(container)];
    await Promise.all(
      Array.from({ length: 8 }, (_, n) => (n % 2 === 0 ? one : two).record(call(userId, `s${n % 3}`, n))),
    );
    const month = await one.counter(userId, 'month', DAY.slice(0, 7));
    expect((month?.turns.calls ?? 0) + (month?.background.calls ?? 0)).toBe(8);
    expect(month?.days).toEqual({ [DAY.slice(8)]: 8 * 110 });
    const conversations = await one.conversations(userId, ['s0', 's1', 's2']);
    expect(
      conversations.reduce((sum, counter) => sum + counter.turns.calls + counter.background.calls, 0),
    ).toBe(8);
  });

  it("records a deleted conversation's later calls without it, and leaves no item naming it", async () => {
    const ledger = createCosmosUsageLedger(container);
    const userId = newUser();
    const sessionId = randomUUID();
    await ledger.record(call(userId, sessionId, 0));
    expect(await ledger.detachConversation(userId, sessionId)).toBe(1);
    // A call of the conversation that ends after the delete: counted in the user's totals, tied to nothing.
    expect(await ledger.record(call(userId, sessionId, 1))).toBe(true);
    expect(await ledger.counter(userId, 'conversation', sessionId)).toBeUndefined();
    expect(await ledger.conversations(userId, [sessionId])).toEqual([]);
    const records = await ledger.records(userId, DAY, DAY);
    expect(records.map((record) => [record.sessionId, record.turnId])).toEqual([
      [undefined, undefined],
      [undefined, undefined],
    ]);
    expect(
      (await ledger.lifetime(userId)).background.calls + (await ledger.lifetime(userId)).turns.calls,
    ).toBe(2);
    const { resources: naming } = await container.items
      .query({
        query: 'SELECT c.id FROM c WHERE c.sessionId = @s OR CONTAINS(c.id, @s)',
        parameters: [{ name: '@s', value: sessionId }],
      })
      .fetchAll();
    expect(naming).toEqual([]);
  });

  it('keeps apart a conversation of the same user that is not deleted', async () => {
    const ledger = createCosmosUsageLedger(container);
    const userId = newUser();
    await ledger.record(call(userId, 'kept', 0));
    await ledger.detachConversation(userId, 'gone');
    expect(await ledger.record(call(userId, 'kept', 1))).toBe(true);
    expect((await ledger.counter(userId, 'conversation', 'kept'))?.background.calls).toBe(1);
  });
});
