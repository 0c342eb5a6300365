// Contract of the local Service Bus's data file: what a restart or a crash keeps (messages in session
// order, in-flight messages redelivered, dead letters, duplicate detection, sequence numbers) and that a
// file it cannot load stops start-up. A "crash" is a second instance opened on the file of a live one.
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  CorruptDataFileError,
  LocalServiceBus,
  type LocalServiceBusOpenOptions,
  type ReceivedMessage,
} from '../../local/service-bus/local-service-bus.js';
import { ConflictError, DependencyError } from '../../shared/errors.js';
import type { OutgoingMessage } from '../../shared/messaging/message-publisher.js';
import { MESSAGE_COMPLETED_TOPIC } from '../../shared/conversation/message-completed.js';
import { USER_MESSAGES_QUEUE } from '../../shared/chat/contracts/queue.js';
import { HISTORY_SUBSCRIPTION } from '../../shared/history/contracts.js';
import { MEMORY_SUBSCRIPTION } from '../../shared/memory/contracts.js';
import { serviceBusQueues } from '../../shared/app/service-bus-entities.js';
import type { TopicDefinition } from '../../shared/messaging/service-bus-entities.js';

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

let dir: string;
let dataFile: string;
/** Instances to close after the test. */
let buses: LocalServiceBus[] = [];
/** Instances that "crashed": never closed, only kept from writing into the next test's folder. */
const crashed: LocalServiceBus[] = [];

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'service-bus-persistence-'));
  dataFile = join(dir, 'service-bus.json');
});

afterEach(async () => {
  await Promise.all(buses.splice(0).map((bus) => bus.close()));
  // Their batched save is still pending: let it land now, before the folder goes.
  await Promise.all(crashed.splice(0).map((bus) => bus.flush()));
  await rm(dir, { recursive: true, force: true });
});

/** A broker with the app's queues and the fan-out topic with its consumers' subscriptions, on the test's data file. */
async function openBus(options: LocalServiceBusOpenOptions = {}): Promise<LocalServiceBus> {
  const bus = await LocalServiceBus.open({
    dataFile,
    queues: serviceBusQueues,
    topics: completedTopics,
    redeliveryDelayMs: 1,
    flushDelayMs: 5,
    ...options,
  });
  buses.push(bus);
  return bus;
}

/** An instance that will crash: its batched saves would come long after the crash. */
function openDoomed(options: LocalServiceBusOpenOptions = {}): Promise<LocalServiceBus> {
  return openBus({ flushDelayMs: 60_000, ...options });
}

/** From here on the instance counts as killed: the test opens another one on its file and never closes it. */
function crash(bus: LocalServiceBus): void {
  buses = buses.filter((open) => open !== bus);
  crashed.push(bus);
}

function chatMessage(sessionId: string, n: number): OutgoingMessage {
  return { messageId: `${sessionId}-${n}`, sessionId, body: { sessionId, n } };
}

/** Receives from `source` into a list, completing every message. */
function collect(bus: LocalServiceBus, source: Parameters<LocalServiceBus['receive']>[0]): ReceivedMessage[] {
  const received: ReceivedMessage[] = [];
  bus.receive(source, (message) => {
    received.push(message);
    return Promise.resolve();
  });
  return received;
}

function summary(messages: readonly ReceivedMessage[]): [string, number][] {
  return messages.map((m) => [m.messageId, m.deliveryCount]);
}

async function savedState(): Promise<{ entities: { name: string; messages?: unknown[] }[] }> {
  return JSON.parse(await readFile(dataFile, 'utf8')) as {
    entities: { name: string; messages?: unknown[] }[];
  };
}

describe('restart', () => {
  it('keeps messages not yet consumed across close() and open(), in order within each session', async () => {
    const enqueuedAt = Date.UTC(2025, 2, 3, 4, 5, 6, 789);
    const first = await openBus({ now: () => enqueuedAt });
    const sent = Array.from({ length: 5 }, (_, n) => ['a', 'b', 'c'].map((s) => chatMessage(s, n))).flat();
    await first.publish(USER_MESSAGES_QUEUE, sent.slice(0, 4));
    await first.publish(USER_MESSAGES_QUEUE, sent.slice(4));
    await first.publish(MESSAGE_COMPLETED_TOPIC, {
      ...chatMessage('a', 99),
      correlationId: 'c',
      subject: 's',
    });
    await first.close();

    const second = await openBus();
    expect(second.activeMessageCount(userMessages)).toBe(15);
    const received = collect(second, userMessages);
    const completed = collect(second, history);
    await second.idle();

    for (const session of ['a', 'b', 'c']) {
      const ofSession = received.filter((m) => m.sessionId === session);
      expect(ofSession.map((m) => (m.body as { n: number }).n)).toEqual([0, 1, 2, 3, 4]);
    }
    expect(received.every((m) => m.deliveryCount === 1)).toBe(true);
    expect(received.map((m) => m.sequenceNumber).sort((x, y) => x - y)).toEqual(
      Array.from({ length: 15 }, (_, i) => i + 1),
    );
    expect(received[0]!.enqueuedTimeUtc.getTime()).toBe(enqueuedAt);
    expect(completed).toMatchObject([
      {
        messageId: 'a-99',
        sessionId: 'a',
        correlationId: 'c',
        subject: 's',
        body: { sessionId: 'a', n: 99 },
      },
    ]);
    expect(second.activeMessageCount(memory)).toBe(1); // nobody received it: still there
  });

  it('saves settlements soon after, without close(), and keeps only live state in the file', async () => {
    const bus = await openBus();
    await bus.publish(USER_MESSAGES_QUEUE, [chatMessage('s1', 1), chatMessage('s1', 2)]);
    expect((await savedState()).entities.find((e) => e.name === USER_MESSAGES_QUEUE)?.messages).toHaveLength(
      2,
    );

    collect(bus, userMessages);
    await bus.idle();
    await vi.waitFor(async () => {
      const queue = (await savedState()).entities.find((e) => e.name === USER_MESSAGES_QUEUE);
      expect(queue?.messages).toEqual([]);
    });
  });

  it('continues sequence numbers after the highest given, per queue and topic', async () => {
    const first = await openBus();
    await first.publish(
      USER_MESSAGES_QUEUE,
      [1, 2, 3].map((n) => chatMessage('s1', n)),
    );
    await first.publish(MESSAGE_COMPLETED_TOPIC, chatMessage('s1', 1));
    collect(first, userMessages);
    await first.idle();
    await first.close();

    const second = await openBus();
    expect(second.activeMessageCount(userMessages)).toBe(0);
    await second.publish(USER_MESSAGES_QUEUE, chatMessage('s1', 4));
    await second.publish(MESSAGE_COMPLETED_TOPIC, chatMessage('s1', 2));
    const queued = collect(second, userMessages);
    const fannedOut = collect(second, memory);
    await second.idle();
    expect(queued.map((m) => m.sequenceNumber)).toEqual([4]);
    expect(fannedOut.map((m) => [m.messageId, m.sequenceNumber])).toEqual([
      ['s1-1', 1],
      ['s1-2', 2],
    ]);
  });
});

describe('crash', () => {
  it('redelivers the in-flight message with deliveryCount 2 and loses nothing behind it in its session', async () => {
    const first = await openDoomed();
    let entered: (message: ReceivedMessage) => void = () => undefined;
    const handling = new Promise<ReceivedMessage>((resolve) => (entered = resolve));
    // Sent before anyone receives: what the file knows of the delivery, the broker recorded when it began.
    await first.publish(USER_MESSAGES_QUEUE, [
      ...[1, 2, 3].map((n) => chatMessage('s1', n)),
      chatMessage('s2', 1),
    ]);
    first.receive(
      userMessages,
      (message) => {
        entered(message);
        return new Promise<void>(() => undefined); // the process dies before this settles
      },
      { maxConcurrentSessions: 1 }, // so the other session is not touched before the crash
    );
    const inFlight = await handling;
    expect([inFlight.messageId, inFlight.deliveryCount]).toEqual(['s1-1', 1]);
    crash(first);

    const second = await openBus();
    const received = collect(second, userMessages);
    await second.idle();
    const s1 = received.filter((m) => m.sessionId === 's1');
    expect(summary(s1)).toEqual([
      ['s1-1', 2],
      ['s1-2', 1],
      ['s1-3', 1],
    ]);
    expect(s1[0]!.sequenceNumber).toBe(inFlight.sequenceNumber);
    expect(s1[0]!.enqueuedTimeUtc).toEqual(inFlight.enqueuedTimeUtc);
    expect(summary(received.filter((m) => m.sessionId === 's2'))).toEqual([['s2-1', 1]]);
  });

  it('keeps a publish that resolved even if the process stops right after', async () => {
    const first = await openDoomed();
    // Concurrent sends share writes; each resolves only once its messages are on disk.
    await Promise.all(
      Array.from({ length: 20 }, (_, n) => first.publish(USER_MESSAGES_QUEUE, chatMessage('s1', n))),
    );
    crash(first);

    const second = await openBus();
    const received = collect(second, userMessages);
    await second.idle();
    expect(received.map((m) => (m.body as { n: number }).n)).toEqual(Array.from({ length: 20 }, (_, n) => n));
  });

  it('dead-letters a message whose last allowed delivery was cut short, as a lost lock does', async () => {
    const first = await openDoomed({ maxDeliveryCount: 2 });
    let entered: () => void = () => undefined;
    const secondAttempt = new Promise<void>((resolve) => (entered = resolve));
    first.receive(userMessages, (message) => {
      if (message.deliveryCount === 1) return Promise.reject(new Error('transient'));
      entered();
      return new Promise<void>(() => undefined);
    });
    await first.publish(USER_MESSAGES_QUEUE, [chatMessage('s1', 1), chatMessage('s1', 2)]);
    await secondAttempt;
    crash(first);

    const second = await openBus({ maxDeliveryCount: 2 });
    const received = collect(second, userMessages);
    await second.idle();
    expect(summary(received)).toEqual([['s1-2', 1]]);
    expect(second.deadLetters(userMessages)).toMatchObject([
      { messageId: 's1-1', deliveryCount: 2, deadLetterReason: 'MaxDeliveryCountExceeded' },
    ]);
  });
});

describe('dead letters and duplicate detection', () => {
  it('keeps dead letters with their reason and description', async () => {
    const first = await openBus({ maxDeliveryCount: 2 });
    first.receive(userMessages, () => Promise.reject(new Error('poison')));
    await first.publish(USER_MESSAGES_QUEUE, chatMessage('s1', 1));
    await first.publish(MESSAGE_COMPLETED_TOPIC, { messageId: 'no-session', body: { turn: 1 } });
    await first.idle();
    const before = [first.deadLetters(userMessages), first.deadLetters(history)];
    expect(before[0]).toMatchObject([
      { messageId: 's1-1', deliveryCount: 2, deadLetterErrorDescription: 'poison' },
    ]);
    await first.close();

    const second = await openBus();
    expect([second.deadLetters(userMessages), second.deadLetters(history)]).toEqual(before);
    expect(second.deadLetters(history)).toMatchObject([
      { messageId: 'no-session', deadLetterReason: 'Session ID is null.', body: { turn: 1 } },
    ]);
    expect(second.activeMessageCount(userMessages)).toBe(0);
  });

  it('drops a duplicate message id sent after a restart within the window, and accepts it after', async () => {
    let time = Date.UTC(2025, 0, 1);
    const window = { now: () => time, duplicateDetectionWindowMs: 60_000 };
    const first = await openBus(window);
    collect(first, userMessages);
    await first.publish(USER_MESSAGES_QUEUE, chatMessage('s1', 1));
    await first.idle();
    await first.close();

    time += 59_000;
    const second = await openBus(window);
    const received = collect(second, userMessages);
    await second.publish(USER_MESSAGES_QUEUE, chatMessage('s1', 1));
    await second.idle();
    expect(received).toEqual([]);

    time += 1_000;
    await second.publish(USER_MESSAGES_QUEUE, chatMessage('s1', 1));
    await second.idle();
    expect(summary(received)).toEqual([['s1-1', 1]]);
  });
});

describe('what the file holds', () => {
  it('keeps the data of an entity the app no longer declares, undelivered, until it is declared again', async () => {
    const legacy = { name: 'legacy-queue', requiresSession: false };
    const first = await openBus({ queues: [...serviceBusQueues, legacy] });
    await first.publish(legacy.name, { messageId: 'old', body: 'kept' });
    await first.close();

    const second = await openBus();
    expect(() => second.activeMessageCount({ queueName: legacy.name })).toThrow(/could not be found/);
    await second.publish(USER_MESSAGES_QUEUE, chatMessage('s1', 1));
    await second.close();

    const third = await openBus({ queues: [...serviceBusQueues, legacy] });
    const received = collect(third, { queueName: legacy.name });
    await third.idle();
    expect(received).toMatchObject([{ messageId: 'old', body: 'kept', deliveryCount: 1 }]);
  });

  it('opens a topic declared without the subscriptions it once had, keeps their messages, and takes sends', async () => {
    const first = await openBus();
    await first.publish(MESSAGE_COMPLETED_TOPIC, chatMessage('s1', 1));
    await first.close();

    // The topic declared without its subscriptions (as before their consumers came).
    const second = await openBus({ topics: [{ name: MESSAGE_COMPLETED_TOPIC, subscriptions: [] }] });
    await expect(second.publish(MESSAGE_COMPLETED_TOPIC, chatMessage('s1', 2))).resolves.toBeUndefined();
    expect(() => second.activeMessageCount(history)).toThrow(/could not be found/);
    await second.close();

    const third = await openBus();
    const received = collect(third, history);
    await third.idle();
    // The message sent while no subscription existed was dropped, as Service Bus drops it.
    expect(received.map((m) => m.messageId)).toEqual(['s1-1']);
    expect(third.activeMessageCount(memory)).toBe(1);
  });

  it('refuses a declaration whose sessions setting differs from the saved entity, as Service Bus does', async () => {
    const first = await openBus();
    await first.publish(USER_MESSAGES_QUEUE, chatMessage('s1', 1));
    await first.close();

    const changed = [{ name: USER_MESSAGES_QUEUE, requiresSession: false }];
    const opening = LocalServiceBus.open({ dataFile, queues: changed, topics: completedTopics });
    await expect(opening).rejects.toBeInstanceOf(ConflictError);
    await expect(opening).rejects.toThrow(/requiresSession cannot change/);
  });

  const corruptions: [string, string][] = [
    ['not JSON', '{"format": "local-service-bus-snapshot", '],
    ['not the format', JSON.stringify({ format: 'something-else', entities: [] })],
    [
      'inconsistent',
      JSON.stringify({
        format: 'local-service-bus-snapshot',
        version: 1,
        savedAt: '2025-01-01T00:00:00.000Z',
        entities: [
          {
            kind: 'queue',
            name: USER_MESSAGES_QUEUE,
            requiresSession: true,
            lastSequenceNumber: 0,
            duplicateDetection: [],
            messages: [
              {
                sequenceNumber: 1,
                messageId: 'm',
                sessionId: 's',
                contentType: 'application/json',
                applicationProperties: {},
                enqueuedTimeUtc: '2025-01-01T00:00:00.000Z',
                deliveryCount: 0,
                bodyText: '1',
              },
            ],
            deadLetters: [],
          },
        ],
      }),
    ],
  ];

  it.each(corruptions)(
    'stops open() on a file that is %s, naming it and leaving it untouched',
    async (_, text) => {
      await writeFile(dataFile, text);
      const opening = openBus();
      await expect(opening).rejects.toBeInstanceOf(CorruptDataFileError);
      await expect(opening).rejects.toThrow(dataFile);
      expect(await readFile(dataFile, 'utf8')).toBe(text);
    },
  );

  it('fails a send it cannot save, and a retry with the same id is saved once', async () => {
    const nested = join(dir, 'nested');
    dataFile = join(nested, 'service-bus.json');
    const first = await openDoomed();
    await writeFile(nested, 'a file where the folder should be');

    const failed = first.publish(USER_MESSAGES_QUEUE, chatMessage('s1', 1));
    await expect(failed).rejects.toBeInstanceOf(DependencyError);
    await expect(failed).rejects.toThrow(dataFile);

    await rm(nested);
    await mkdir(nested);
    await first.publish(USER_MESSAGES_QUEUE, chatMessage('s1', 1));
    crash(first);

    const second = await openBus();
    const received = collect(second, userMessages);
    await second.idle();
    expect(summary(received)).toEqual([['s1-1', 1]]);
  });
});
