import { describe, expect, it } from 'vitest';
import { noTaskHubEvents } from '../local/durable/task-hub-events.js';
import { readLocalStats } from '../local/local-stats.js';
import {
  PRICES,
  idlePollingPerHour,
  meanPrice,
  readTaskHubPolling,
  turnBill,
  turnPrice,
} from './turn-price.js';

/**
 * One turn as the local services count it (a start, two activities, a few messages and deliveries), read as
 * GET /local/stats answers it: the bench bills what the endpoint shows.
 */
function usage() {
  return readLocalStats(
    {
      cosmos: {
        stats: () => ({
          requests: 10,
          requestBytes: 0,
          responseBytes: 0,
          byOperation: {},
          byContainer: {},
          requestUnits: 40,
        }),
      },
      serviceBus: {
        stats: () => ({
          sends: 3,
          sessionAccepts: 3,
          receives: 6,
          completes: 3,
          abandons: 0,
          deadLetters: 0,
        }),
      },
      webPubSub: {
        stats: () => ({ connections: 1, restCalls: 5, deliveredMessages: 5, deliveredMessageUnits: 6 }),
      },
      taskHub: {
        stats: () => ({
          ...noTaskHubEvents(),
          orchestrationStarts: 1,
          episodes: 3,
          messages: 3,
          activities: 2,
          activityResults: 2,
          completions: 1,
        }),
      },
    },
    new Date(0),
  );
}

describe('turnBill', () => {
  it('counts each service in the units it bills', () => {
    expect(turnBill(usage())).toEqual({
      cosmosRequestUnits: 40,
      serviceBusOperations: 15,
      webPubSubMessages: 5,
      webPubSubMessageUnits: 6,
      // start 1 + episodes 3 + messages 3 + activities 2 × 4
      storageQueueTransactions: 15,
      // start 1 + episodes 3 × 3
      storageTableTransactions: 10,
      // start 1 + activities 2 × 2, as the scheduler's billing page counts an orchestration of activities
      schedulerActions: 5,
    });
  });
});

describe('turnPrice', () => {
  it('prices 1,000 turns at the named prices, each service and in all', () => {
    const price = turnPrice(turnBill(usage()));
    const u = price.usdPer1000Turns;
    expect(u.cosmos).toBeCloseTo((40_000 * PRICES.cosmosServerlessUsdPerMillionRu) / 1e6, 12);
    expect(u.serviceBus).toBeCloseTo((15_000 * PRICES.serviceBusStandardUsdPerMillionOperations) / 1e6, 12);
    expect(u.webPubSub).toBeCloseTo((6_000 * PRICES.webPubSubStandardUsdPerMillionMessages) / 1e6, 12);
    expect(u.storage).toBeCloseTo(
      (15_000 * PRICES.storageQueueUsdPer10kTransactions +
        10_000 * PRICES.storageTableUsdPer10kTransactions) /
        1e4,
      12,
    );
    expect(u.totalWithStorage).toBeCloseTo(u.cosmos + u.serviceBus + u.webPubSub + u.storage, 12);
    expect(u.totalWithScheduler).toBeCloseTo(u.cosmos + u.serviceBus + u.webPubSub + u.scheduler, 12);
  });

  it('averages turns field by field', () => {
    const one = turnPrice(turnBill(usage()));
    const doubled = turnPrice({ ...turnBill(usage()), cosmosRequestUnits: 80 });
    const mean = meanPrice([one, doubled]);
    expect(mean.cosmosRequestUnits).toBe(60);
    expect(mean.usdPer1000Turns.cosmos).toBeCloseTo((one.usdPer1000Turns.cosmos * 3) / 2, 12);
    expect(mean.serviceBusOperations).toBe(15);
  });
});

describe('the task hub at rest', () => {
  it("polls each control queue and the work-item queue once per host.json's interval", () => {
    const idle = idlePollingPerHour({ maxQueuePollingIntervalMs: 200, partitionCount: 4 });
    expect(idle.queues).toBe(5);
    expect(idle.transactions).toBe(5 * 18_000);
    expect(idle.usd).toBeCloseTo((90_000 * PRICES.storageQueueUsdPer10kTransactions) / 1e4, 12);
  });

  it("reads the project's host.json", async () => {
    const polling = await readTaskHubPolling('host.json');
    expect(polling.partitionCount).toBeGreaterThan(0);
    expect(polling.maxQueuePollingIntervalMs).toBeGreaterThan(0);
  });
});
