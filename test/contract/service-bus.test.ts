// Contract of the local Service Bus: the semantics the app relies on (sessions in order, duplicate detection,
// redelivery, dead-lettering, topic fan-out) and the body and trigger metadata its handlers receive, driven
// through the broker's public API and real function handlers mounted with attachServiceBusTrigger.
import azureFunctions, { type InvocationContext } from '@azure/functions';
import { afterEach, describe, expect, it } from 'vitest';
import { attachServiceBusTrigger } from '../../local/service-bus/attach-trigger.js';
import type { AzureLatencyModel, AzureLatencyOperation } from '../../local/latency/azure-latency.js';
import { LocalServiceBus, type LocalServiceBusOptions } from '../../local/service-bus/local-service-bus.js';
import { DependencyError } from '../../shared/errors.js';
import type { OutgoingMessage } from '../../shared/messaging/message-publisher.js';
import { MESSAGE_COMPLETED_TOPIC } from '../../shared/conversation/message-completed.js';
import { USER_MESSAGES_QUEUE } from '../../shared/chat/contracts/queue.js';
import { HISTORY_SUBSCRIPTION } from '../../shared/history/contracts.js';
import { MEMORY_SUBSCRIPTION } from '../../shared/memory/contracts.js';
import { SERVICE_BUS_CONNECTION, type TopicDefinition } from '../../shared/messaging/service-bus-entities.js';
import { serviceBusQueues } from '../../shared/app/service-bus-entities.js';

const { InvocationContext: InvocationContextClass, trigger } = azureFunctions;

const userMessages = { queueName: USER_MESSAGES_QUEUE };
const history = { topicName: MESSAGE_COMPLETED_TOPIC, subscriptionName: HISTORY_SUBSCRIPTION };
const memory = { topicName: MESSAGE_COMPLETED_TOPIC, subscriptionName: MEMORY_SUBSCRIPTION };

/** The fan-out topic with the subscriptions its consumers (the history and memory workers) will declare. */
const completedTopics: readonly TopicDefinition[] = [
  {
    name: MESSAGE_COMPLETED_TOPIC,
    subscriptions: [
      { name: HISTORY_SUBSCRIPTION, requiresSession: true },
      { name: MEMORY_SUBSCRIPTION, requiresSession: true },
    ],
  },
];

const buses: LocalServiceBus[] = [];
afterEach(async () => {
  await Promise.all(buses.splice(0).map((bus) => bus.close()));
});

/** A broker with the app's queues and the fan-out topic with the subscriptions its consumers will declare. */
function appBus(options: LocalServiceBusOptions = {}): LocalServiceBus {
  const bus = new LocalServiceBus({ redeliveryDelayMs: 1, ...options });
  serviceBusQueues.forEach((queue) => bus.createQueue(queue));
  completedTopics.forEach((topic) => bus.createTopic(topic));
  buses.push(bus);
  return bus;
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function chatMessage(sessionId: string, n: number): OutgoingMessage {
  return { messageId: `${sessionId}-${n}`, sessionId, body: { sessionId, n } };
}

/** What a handler saw of one invocation. */
interface Seen {
  body: { sessionId: string; n: number };
  messageId: unknown;
  sessionId: unknown;
  deliveryCount: unknown;
}

function seen(message: unknown, context: InvocationContext): Seen {
  return {
    body: message as Seen['body'],
    messageId: context.triggerMetadata?.messageId,
    sessionId: context.triggerMetadata?.sessionId,
    deliveryCount: context.triggerMetadata?.deliveryCount,
  };
}

describe('sessions', () => {
  it('delivers each session in order, one message at a time, and different sessions concurrently', async () => {
    const bus = appBus();
    const sessions = ['session-a', 'session-b', 'session-c'];
    const delivered = new Map<string, number[]>(sessions.map((s) => [s, []]));
    const running = new Map<string, number>();
    let concurrentSessions = 0;
    let maxConcurrentSessions = 0;
    let overlapWithinSession = false;

    attachServiceBusTrigger(bus, {
      functionName: 'chatWorker',
      source: userMessages,
      isSessionsEnabled: true,
      handler: async (message: unknown, context: InvocationContext) => {
        const { body } = seen(message, context);
        const active = (running.get(body.sessionId) ?? 0) + 1;
        running.set(body.sessionId, active);
        if (active > 1) overlapWithinSession = true;
        if (active === 1) concurrentSessions += 1;
        maxConcurrentSessions = Math.max(maxConcurrentSessions, concurrentSessions);
        await sleep(body.n % 3);
        delivered.get(body.sessionId)!.push(body.n);
        running.set(body.sessionId, active - 1);
        if (active === 1) concurrentSessions -= 1;
      },
    });

    // Interleaved across sessions, in several sends of different sizes.
    const all = Array.from({ length: 20 }, (_, n) => sessions.map((s) => chatMessage(s, n))).flat();
    await bus.publish(USER_MESSAGES_QUEUE, all.slice(0, 7));
    await bus.publish(USER_MESSAGES_QUEUE, all[7]!);
    await bus.publish(USER_MESSAGES_QUEUE, all.slice(8));
    await bus.idle();

    const expected = Array.from({ length: 20 }, (_, n) => n);
    for (const session of sessions) expect(delivered.get(session)).toEqual(expected);
    expect(overlapWithinSession).toBe(false);
    expect(maxConcurrentSessions).toBe(3);
    expect(bus.activeMessageCount(userMessages)).toBe(0);
  });

  it('holds no more sessions at once than maxConcurrentSessions', async () => {
    const bus = appBus();
    let active = 0;
    let maxActive = 0;
    bus.receive(
      userMessages,
      async () => {
        active += 1;
        maxActive = Math.max(maxActive, active);
        await sleep(2);
        active -= 1;
      },
      { maxConcurrentSessions: 2 },
    );
    await bus.publish(
      USER_MESSAGES_QUEUE,
      ['s1', 's2', 's3', 's4'].map((s) => chatMessage(s, 0)),
    );
    await bus.idle();
    expect(maxActive).toBe(2);
  });

  it('refuses a message without sessionId on a session queue, and accepts none of its batch', async () => {
    const bus = appBus();
    const batch: OutgoingMessage[] = [chatMessage('s1', 0), { messageId: 'no-session', body: {} }];

    await expect(bus.publish(USER_MESSAGES_QUEUE, batch)).rejects.toBeInstanceOf(DependencyError);
    await expect(bus.publish(USER_MESSAGES_QUEUE, { messageId: 'm', body: 1 })).rejects.toThrow(
      /requires sessions/,
    );
    expect(bus.activeMessageCount(userMessages)).toBe(0);
  });

  it('dead-letters a session-less copy on a session subscription, as Service Bus does', async () => {
    const bus = appBus();
    await bus.publish(MESSAGE_COMPLETED_TOPIC, { messageId: 'turn-1', body: { turn: 1 } });

    expect(bus.deadLetters(history)).toEqual([
      expect.objectContaining({
        messageId: 'turn-1',
        body: { turn: 1 },
        deadLetterReason: 'Session ID is null.',
        deadLetterErrorDescription:
          "Session enabled entity doesn't allow a message whose session identifier is null.",
      }),
    ]);
    expect(bus.deadLetters(memory)).toHaveLength(1);
  });

  it('refuses a trigger whose isSessionsEnabled does not match the entity', () => {
    const bus = appBus();
    const handler = (): Promise<void> => Promise.resolve();
    expect(() =>
      attachServiceBusTrigger(bus, {
        functionName: 'f',
        source: userMessages,
        isSessionsEnabled: false,
        handler,
      }),
    ).toThrow(/requires sessions/);
  });
});

describe('duplicate detection', () => {
  it('drops a second send of a message id within the window and accepts it after the window', async () => {
    let time = Date.UTC(2025, 0, 1);
    const bus = appBus({ now: () => time, duplicateDetectionWindowMs: 60_000 });
    const deliveries: Seen[] = [];
    attachServiceBusTrigger(bus, {
      functionName: 'chatWorker',
      source: userMessages,
      isSessionsEnabled: true,
      handler: (message, context) => {
        deliveries.push(seen(message, context));
        return Promise.resolve();
      },
    });

    await bus.publish(USER_MESSAGES_QUEUE, chatMessage('s1', 1));
    time += 59_999;
    await bus.publish(USER_MESSAGES_QUEUE, chatMessage('s1', 1));
    await bus.idle();
    expect(deliveries.map((d) => d.messageId)).toEqual(['s1-1']);

    time += 1; // the window of the first send is over
    await bus.publish(USER_MESSAGES_QUEUE, chatMessage('s1', 1));
    await bus.idle();
    expect(deliveries.map((d) => d.messageId)).toEqual(['s1-1', 's1-1']);
  });

  it('tracks message ids per entity', async () => {
    const bus = appBus();
    bus.createQueue({ name: 'other', requiresSession: false });
    await bus.publish(USER_MESSAGES_QUEUE, chatMessage('s1', 1));
    await bus.publish('other', chatMessage('s1', 1));
    expect(bus.activeMessageCount(userMessages)).toBe(1);
    expect(bus.activeMessageCount({ queueName: 'other' })).toBe(1);
  });
});

describe('redelivery and dead-lettering', () => {
  it('redelivers a failed message with deliveryCount 2 and the same id before the rest of its session', async () => {
    const bus = appBus();
    const deliveries: Seen[] = [];
    attachServiceBusTrigger(bus, {
      functionName: 'chatWorker',
      source: userMessages,
      isSessionsEnabled: true,
      handler: (message, context) => {
        const delivery = seen(message, context);
        deliveries.push(delivery);
        if (delivery.body.n === 1 && delivery.deliveryCount === 1) throw new Error('transient');
        return Promise.resolve();
      },
    });

    await bus.publish(USER_MESSAGES_QUEUE, [chatMessage('s1', 1), chatMessage('s1', 2)]);
    await bus.idle();

    expect(deliveries.map(({ messageId, deliveryCount }) => [messageId, deliveryCount])).toEqual([
      ['s1-1', 1],
      ['s1-1', 2],
      ['s1-2', 1],
    ]);
    expect(bus.deadLetters(userMessages)).toEqual([]);
  });

  it('dead-letters after maxDeliveryCount deliveries with the reason and the last error, then goes on', async () => {
    const bus = appBus({ maxDeliveryCount: 3 });
    const deliveries: Seen[] = [];
    attachServiceBusTrigger(bus, {
      functionName: 'chatWorker',
      source: userMessages,
      isSessionsEnabled: true,
      handler: (message, context) => {
        const delivery = seen(message, context);
        deliveries.push(delivery);
        if (delivery.body.n === 1) throw new Error(`poison, attempt ${String(delivery.deliveryCount)}`);
        return Promise.resolve();
      },
    });

    await bus.publish(USER_MESSAGES_QUEUE, [chatMessage('s1', 1), chatMessage('s1', 2)]);
    await bus.idle();

    expect(deliveries.map((d) => [d.messageId, d.deliveryCount])).toEqual([
      ['s1-1', 1],
      ['s1-1', 2],
      ['s1-1', 3],
      ['s1-2', 1],
    ]);
    const [deadLettered, ...others] = bus.deadLetters(userMessages);
    expect(others).toEqual([]);
    expect(deadLettered).toMatchObject({
      messageId: 's1-1',
      sessionId: 's1',
      body: { sessionId: 's1', n: 1 },
      deliveryCount: 3,
      deadLetterReason: 'MaxDeliveryCountExceeded',
      deadLetterErrorDescription: 'poison, attempt 3',
    });
    expect(bus.activeMessageCount(userMessages)).toBe(0);
  });

  it('redelivers and dead-letters on an entity without sessions too', async () => {
    const bus = appBus({ maxDeliveryCount: 2 });
    bus.createQueue({ name: 'plain', requiresSession: false });
    const counts: number[] = [];
    bus.receive({ queueName: 'plain' }, (message) => {
      counts.push(message.deliveryCount);
      return Promise.reject(new Error('always'));
    });

    await bus.publish('plain', { messageId: 'p1', body: 'x' });
    await bus.idle();

    expect(counts).toEqual([1, 2]);
    expect(bus.deadLetters({ queueName: 'plain' })).toMatchObject([
      {
        messageId: 'p1',
        body: 'x',
        deadLetterReason: 'MaxDeliveryCountExceeded',
        deadLetterErrorDescription: 'always',
      },
    ]);
  });

  it('stops after the running handler settles and leaves the rest for the next receiver', async () => {
    const bus = appBus();
    const first: number[] = [];
    let running = 0;
    let release: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let entered: () => void = () => undefined;
    const handling = new Promise<void>((resolve) => (entered = resolve));
    const stop = bus.receive(userMessages, async (message) => {
      running += 1;
      entered();
      await gate;
      first.push((message.body as { n: number }).n);
      running -= 1;
    });
    await bus.publish(
      USER_MESSAGES_QUEUE,
      [1, 2, 3].map((n) => chatMessage('s1', n)),
    );
    await handling;
    const stopping = stop();
    release();
    await stopping;
    expect(running).toBe(0);
    expect(first).toEqual([1]);

    const second: number[] = [];
    bus.receive(userMessages, (message) => {
      second.push((message.body as { n: number }).n);
      return Promise.resolve();
    });
    await bus.idle();
    expect(second).toEqual([2, 3]);
  });
});

describe('topics', () => {
  it('copies a message to every subscription, each settled on its own', async () => {
    const bus = appBus();
    const byFunction: Record<string, Seen[]> = { historyWorker: [], memoryWorker: [] };
    for (const [functionName, source] of [
      ['historyWorker', history],
      ['memoryWorker', memory],
    ] as const) {
      attachServiceBusTrigger(bus, {
        functionName,
        source,
        isSessionsEnabled: true,
        handler: (message, context) => {
          const delivery = seen(message, context);
          byFunction[functionName]!.push(delivery);
          if (functionName === 'memoryWorker' && delivery.deliveryCount === 1)
            throw new Error('memory store busy');
          return Promise.resolve();
        },
      });
    }

    await bus.publish(MESSAGE_COMPLETED_TOPIC, chatMessage('s1', 7));
    await bus.idle();

    expect(byFunction.historyWorker!.map((d) => [d.messageId, d.deliveryCount])).toEqual([['s1-7', 1]]);
    expect(byFunction.memoryWorker!.map((d) => [d.messageId, d.deliveryCount])).toEqual([
      ['s1-7', 1],
      ['s1-7', 2],
    ]);
    expect(byFunction.historyWorker![0]!.body).toEqual({ sessionId: 's1', n: 7 });
  });

  it('accepts a message sent to a topic without subscriptions and drops it, as Service Bus does', async () => {
    // A topic whose subscriptions have not arrived with their consumers yet.
    const bus = new LocalServiceBus({ redeliveryDelayMs: 1 });
    buses.push(bus);
    serviceBusQueues.forEach((queue) => bus.createQueue(queue));
    bus.createTopic({ name: MESSAGE_COMPLETED_TOPIC, subscriptions: [] });

    await expect(bus.publish(MESSAGE_COMPLETED_TOPIC, chatMessage('s1', 1))).resolves.toBeUndefined();
    await expect(
      bus.publish(MESSAGE_COMPLETED_TOPIC, [chatMessage('s1', 2), chatMessage('s1', 3)]),
    ).resolves.toBeUndefined();
    await bus.idle();
    expect(() => bus.activeMessageCount(history)).toThrow(/could not be found/);
  });

  it('fails a send to an unknown entity', async () => {
    const bus = appBus();
    await expect(bus.publish('no-such-queue', chatMessage('s1', 1))).rejects.toThrow(/could not be found/);
  });
});

describe('what a handler receives', () => {
  it('passes the body and the trigger metadata the Functions host gives a Node handler', async () => {
    const enqueued = Date.UTC(2025, 4, 6, 7, 8, 9, 120);
    const bus = appBus({ now: () => enqueued });
    const logged: unknown[][] = [];
    const calls: { message: unknown; context: InvocationContext }[] = [];
    attachServiceBusTrigger(bus, {
      functionName: 'chatWorker',
      source: userMessages,
      isSessionsEnabled: true,
      logHandler: (level, ...args) => logged.push([level, ...args]),
      handler: (message: unknown, context: InvocationContext) => {
        calls.push({ message, context });
        context.log('handled', context.triggerMetadata?.messageId);
        return Promise.resolve();
      },
    });

    const body = { chatMessageId: 'c-1', text: 'hello', Attachment: { FileName: 'a.txt' }, tags: ['x'] };
    await bus.publish(USER_MESSAGES_QUEUE, {
      messageId: 'c-1',
      sessionId: 'session-1',
      correlationId: 'corr-1',
      subject: 'chat',
      applicationProperties: { Kind: 'user', attempt: 2, urgent: false },
      body,
    });
    await bus.idle();

    expect(calls).toHaveLength(1);
    const { message, context } = calls[0]!;
    expect(message).toEqual(body);
    expect(context).toBeInstanceOf(InvocationContextClass);
    expect(context.functionName).toBe('chatWorker');
    expect(context.invocationId).toMatch(/^[0-9a-f-]{36}$/);
    const registered = trigger.serviceBusQueue({
      connection: SERVICE_BUS_CONNECTION,
      isSessionsEnabled: true,
      queueName: USER_MESSAGES_QUEUE,
    });
    expect(context.options.trigger).toEqual({
      type: 'serviceBusTrigger',
      name: registered.name,
      direction: 'in',
    });

    const properties = { kind: 'user', attempt: 2, urgent: false };
    expect(context.triggerMetadata).toEqual({
      deliveryCount: 1,
      lockToken: expect.stringMatching(/^[0-9a-f-]{36}$/),
      expiresAtUtc: '9999-12-31T23:59:59.9999999',
      expiresAt: '9999-12-31T23:59:59.9999999+00:00',
      enqueuedTimeUtc: '2025-05-06T07:08:09.12',
      enqueuedTime: '2025-05-06T07:08:09.12+00:00',
      messageId: 'c-1',
      contentType: 'application/json',
      sequenceNumber: 1,
      subject: 'chat',
      label: 'chat',
      correlationId: 'corr-1',
      applicationProperties: properties,
      userProperties: properties,
      sessionId: 'session-1',
      sys: { methodName: 'chatWorker', utcNow: expect.any(String), randGuid: expect.any(String) },
      // The host also merges a JSON body's top-level properties (not arrays), camel-cased by the worker.
      chatMessageId: 'c-1',
      text: 'hello',
      attachment: { fileName: 'a.txt' },
    });
    expect(logged).toEqual([['information', 'handled', 'c-1']]);
  });

  it('hands a body that is not a JSON object over as is, and logs a failed invocation like the host', async () => {
    const bus = appBus({ maxDeliveryCount: 1 });
    const received: unknown[] = [];
    const logged: unknown[][] = [];
    attachServiceBusTrigger(bus, {
      functionName: 'chatWorker',
      source: userMessages,
      isSessionsEnabled: true,
      logHandler: (level, ...args) => logged.push([level, ...args]),
      handler: (message, context) => {
        received.push(message, context.triggerMetadata?.messageId);
        return Promise.reject(new Error('bad input'));
      },
    });

    await bus.publish(USER_MESSAGES_QUEUE, [
      { messageId: '42', sessionId: 's', body: 'plain text' },
      { messageId: 'list', sessionId: 's', body: [1, 2] },
    ]);
    await bus.idle();

    // A numeric-looking id arrives as a number: the worker parses every string that is valid JSON.
    expect(received).toEqual(['plain text', 42, [1, 2], 'list']);
    expect(logged).toHaveLength(2);
    expect(logged[0]).toEqual([
      'error',
      expect.stringMatching(/^Executed 'Functions\.chatWorker' \(Failed, Id=.+DeliveryCount=1\)$/),
      expect.objectContaining({ message: 'bad input' }),
    ]);
  });
});

describe('the local Service Bus under the Azure latency model', () => {
  /** A model whose draws are scripted per operation (0 once a script runs out). */
  function scriptedLatency(script: Partial<Record<AzureLatencyOperation, number[]>>): AzureLatencyModel {
    const draw = (operation: AzureLatencyOperation) => script[operation]?.shift() ?? 0;
    return {
      options: { seed: 1, taskHub: 'azure-storage', maxQueuePollingIntervalMs: 0 },
      draw,
      delay: (operation) => new Promise((resolve) => setTimeout(resolve, draw(operation))),
    };
  }

  it('keeps a session in the order sent when a later send draws a shorter latency', async () => {
    // Falling send latencies: each send taken on its own would be accepted before the one sent ahead of it.
    const bus = appBus({ latency: scriptedLatency({ 'service-bus.send': [60, 40, 20, 0] }) });
    const seen: number[] = [];
    bus.receive(userMessages, (message) => {
      seen.push((message.body as { n: number }).n);
      return Promise.resolve();
    });
    await Promise.all([1, 2, 3, 4].map((n) => bus.publish(USER_MESSAGES_QUEUE, chatMessage('s1', n))));
    await bus.idle();
    expect(seen).toEqual([1, 2, 3, 4]);
  });

  it('refuses a bad send at once and accepts nothing of it', async () => {
    const bus = appBus({ latency: scriptedLatency({ 'service-bus.send': [50] }) });
    await expect(bus.publish('no-such-queue', chatMessage('s1', 1))).rejects.toBeInstanceOf(DependencyError);
    await expect(bus.publish(USER_MESSAGES_QUEUE, { messageId: 'no-session', body: {} })).rejects.toThrow(
      /requires sessions/,
    );
    expect(bus.activeMessageCount(userMessages)).toBe(0);
  });

  it('hands a message out after the delivery draw, once, and completes it', async () => {
    const bus = appBus({ latency: scriptedLatency({ 'service-bus.delivery': [30, 30] }) });
    const seen: string[] = [];
    bus.receive(userMessages, (message) => {
      seen.push(message.messageId);
      return Promise.resolve();
    });
    await bus.publish(USER_MESSAGES_QUEUE, [chatMessage('s1', 1), chatMessage('s1', 2)]);
    await bus.idle();
    expect(seen).toEqual(['s1-1', 's1-2']);
    expect(bus.activeMessageCount(userMessages)).toBe(0);
  });
});
