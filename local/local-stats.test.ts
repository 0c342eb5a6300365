// The stats the local runtime answers are the services' own counters, with each billed total their sum.
import { describe, expect, it } from 'vitest';
import type { LocalCosmosStats } from './cosmos/local-cosmos.js';
import { noTaskHubEvents } from './durable/task-hub-events.js';
import { readLocalStats } from './local-stats.js';
import { noServiceBusOperations } from './service-bus/entity-receiver.js';

const cosmos: LocalCosmosStats = {
  requests: 3,
  requestBytes: 10,
  responseBytes: 20,
  byOperation: { 'item.read': 2, 'item.create': 1 },
  byContainer: { 'hot item.read': { requests: 2, bytes: 8, requestUnits: 2 } },
  requestUnits: 7.123456,
};

describe('readLocalStats', () => {
  it('sums what each service bills, beside the counts it sums', () => {
    const stats = readLocalStats(
      {
        cosmos: { stats: () => cosmos },
        serviceBus: {
          stats: () => ({
            ...noServiceBusOperations(),
            sends: 2,
            sessionAccepts: 1,
            receives: 3,
            completes: 2,
          }),
        },
        webPubSub: {
          stats: () => ({ connections: 1, restCalls: 4, deliveredMessages: 5, deliveredMessageUnits: 6 }),
        },
        taskHub: {
          stats: () => ({
            ...noTaskHubEvents(),
            orchestrationStarts: 1,
            activities: 3,
            timersFired: 1,
            episodes: 4,
          }),
        },
      },
      new Date('2026-01-02T03:04:05Z'),
    );
    expect(stats).toMatchObject({
      since: '2026-01-02T03:04:05.000Z',
      cosmos: { requests: 3, requestUnits: 7.12, byOperation: cosmos.byOperation },
      serviceBus: { operations: 8, sends: 2, receives: 3 },
      webPubSub: { messages: 5, messageUnits: 6, restCalls: 4, connections: 1 },
      // A start, two actions per activity, a fired timer: episodes are not billed actions.
      taskHub: { operations: 8, episodes: 4 },
    });
  });
});
