// The local broker's background policy: topic-subscription deliveries yield to queue deliveries while those run,
// never losing or reordering a message, and take their own concurrency again once the queues are quiet.
import { afterEach, describe, expect, it } from 'vitest';
import { LocalServiceBus, type ReceivedMessage } from './local-service-bus.js';

const buses: LocalServiceBus[] = [];
const handlers: HeldHandler[] = [];
afterEach(async () => {
  // A failed expectation leaves handlers held: they are let go, so closing (which awaits them) ends.
  for (const handler of handlers.splice(0)) handler.releaseAll();
  await Promise.all(buses.splice(0).map((bus) => bus.close()));
});

/** A handler that records what it starts and finishes each message only when the test releases it. */
class HeldHandler {
  readonly started: string[] = [];
  private readonly releases = new Map<string, () => void>();

  constructor() {
    handlers.push(this);
  }

  readonly handle = (message: ReceivedMessage): Promise<void> => {
    const id = message.messageId;
    this.started.push(id);
    return new Promise((resolve) => this.releases.set(id, resolve));
  };

  release(id: string): void {
    const release = this.releases.get(id);
    if (!release) throw new Error(`${id} has not started`);
    release();
  }

  releaseAll(): void {
    for (const release of this.releases.values()) release();
  }
}

/** Lets every delivery that can start now start (each step of a delivery is a promise or an immediate). */
async function settle(): Promise<void> {
  for (let turn = 0; turn < 10; turn += 1) await new Promise((resolve) => setImmediate(resolve));
}

function bus(maxBackgroundWhileBusy: number | undefined): LocalServiceBus {
  const created = new LocalServiceBus({ redeliveryDelayMs: 1, maxBackgroundWhileBusy });
  created.createQueue({ name: 'chat', requiresSession: true });
  created.createTopic({
    name: 'completed',
    subscriptions: [
      { name: 'history', requiresSession: true },
      { name: 'memory', requiresSession: false },
    ],
  });
  buses.push(created);
  return created;
}

const completed = (sessionId: string, n: number) => ({
  messageId: `${sessionId}-${n}`,
  sessionId,
  body: { n },
});

describe('background deliveries in the local Service Bus', () => {
  it('start at most the set number while a queue delivery runs, in session order, and the rest once it ends', async () => {
    const broker = bus(1);
    const chat = new HeldHandler();
    const history = new HeldHandler();
    broker.receive({ queueName: 'chat' }, chat.handle, { maxConcurrentSessions: 8 });
    broker.receive({ topicName: 'completed', subscriptionName: 'history' }, history.handle, {
      maxConcurrentSessions: 8,
    });
    await broker.publish('chat', { messageId: 'turn', sessionId: 'c', body: {} });
    await settle();
    expect(chat.started).toEqual(['turn']);

    await broker.publish('completed', [completed('a', 1), completed('a', 2), completed('b', 1)]);
    await settle();
    // One session held at once while the turn runs; the session it holds goes on in order.
    expect(history.started).toEqual(['a-1']);
    history.release('a-1');
    await settle();
    expect(history.started).toEqual(['a-1', 'a-2']);

    // The turn ends: the held-back session starts beside the running one.
    chat.release('turn');
    await settle();
    expect(history.started).toEqual(['a-1', 'a-2', 'b-1']);
    history.release('a-2');
    history.release('b-1');
    await broker.idle();
  });

  it('go one message at a time on a subscription without sessions while a turn runs', async () => {
    const broker = bus(1);
    const chat = new HeldHandler();
    const memory = new HeldHandler();
    broker.receive({ queueName: 'chat' }, chat.handle);
    broker.receive({ topicName: 'completed', subscriptionName: 'memory' }, memory.handle, {
      maxConcurrentCalls: 16,
    });
    await broker.publish('chat', { messageId: 'turn', sessionId: 'c', body: {} });
    await broker.publish('completed', [completed('a', 1), completed('b', 1), completed('c', 1)]);
    await settle();
    expect(memory.started).toEqual(['a-1']);
    memory.release('a-1');
    await settle();
    expect(memory.started).toEqual(['a-1', 'b-1']);
    chat.release('turn');
    await settle();
    expect(memory.started).toEqual(['a-1', 'b-1', 'c-1']);
    memory.release('b-1');
    memory.release('c-1');
    await broker.idle();
  });

  it('run at their own concurrency when no queue delivery runs, or when no limit is set', async () => {
    for (const limit of [1, undefined]) {
      const broker = bus(limit);
      const chat = new HeldHandler();
      const history = new HeldHandler();
      broker.receive({ queueName: 'chat' }, chat.handle);
      broker.receive({ topicName: 'completed', subscriptionName: 'history' }, history.handle, {
        maxConcurrentSessions: 8,
      });
      if (limit === undefined) await broker.publish('chat', { messageId: 'turn', sessionId: 'c', body: {} });
      await broker.publish('completed', [completed('a', 1), completed('b', 1), completed('c', 1)]);
      await settle();
      expect(history.started.sort()).toEqual(['a-1', 'b-1', 'c-1']);
      for (const id of history.started) history.release(id);
      if (limit === undefined) chat.release('turn');
      await broker.idle();
    }
  });
});
