// Contract of the local Service Bus's operation counts: what Azure bills on Standard (sends, session accepts,
// receives, settlements) counted as the Functions host would make them.
import { afterEach, describe, expect, it } from 'vitest';
import { LocalServiceBus } from '../../local/service-bus/local-service-bus.js';
import { USER_MESSAGES_QUEUE } from '../../shared/chat/contracts/queue.js';
import { serviceBusQueues } from '../../shared/app/service-bus-entities.js';

const buses: LocalServiceBus[] = [];
afterEach(async () => {
  await Promise.all(buses.splice(0).map((bus) => bus.close()));
});

function bus(): LocalServiceBus {
  const created = new LocalServiceBus({ redeliveryDelayMs: 1 });
  serviceBusQueues.forEach((queue) => created.createQueue(queue));
  created.createTopic({
    name: 'fan-out',
    subscriptions: [
      { name: 'one', requiresSession: false },
      { name: 'two', requiresSession: false },
    ],
  });
  buses.push(created);
  return created;
}

describe('operation counts', () => {
  it('counts each send, session accept, receive and settlement once', async () => {
    const broker = bus();
    let failed = false;
    broker.receive({ queueName: USER_MESSAGES_QUEUE }, (message) => {
      if (message.messageId === 'a-1' && !failed) {
        failed = true;
        return Promise.reject(new Error('the first delivery fails'));
      }
      return Promise.resolve();
    });
    await broker.publish(USER_MESSAGES_QUEUE, [
      { messageId: 'a-1', sessionId: 'a', body: 1 },
      { messageId: 'a-2', sessionId: 'a', body: 2 },
      { messageId: 'b-1', sessionId: 'b', body: 3 },
    ]);
    await broker.idle();

    // Session a: a-1 twice (abandoned, then completed), a-2, then the empty receive that ends it; session b: b-1,
    // then its empty receive.
    expect(broker.stats()).toEqual({
      sends: 3,
      sessionAccepts: 2,
      receives: 6,
      completes: 3,
      abandons: 1,
      deadLetters: 0,
    });
  });

  it('counts a send to a topic once whatever its subscriptions, duplicates too, and starts again on reset', async () => {
    const broker = bus();
    await broker.publish('fan-out', { messageId: 'm-1', body: 1 });
    await broker.publish('fan-out', { messageId: 'm-1', body: 1 });
    expect(broker.stats().sends).toBe(2);
    broker.resetStats();
    expect(broker.stats().sends).toBe(0);
  });
});
