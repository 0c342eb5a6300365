import type { ServiceBusMessage, ServiceBusMessageBatch } from '@azure/service-bus';
import { describe, expect, it } from 'vitest';
import { DependencyError } from '../../errors.js';
import type { OutgoingMessage } from '../message-publisher.js';
import {
  createServiceBusPublisher,
  toServiceBusMessage,
  type ServiceBusClientLike,
  type ServiceBusSenderLike,
} from './service-bus-publisher.js';

/** A batch that holds at most `capacity` messages, standing in for the SDK's size limit. */
class FakeBatch implements ServiceBusMessageBatch {
  readonly messages: ServiceBusMessage[] = [];
  readonly maxSizeInBytes = 1024;
  constructor(private readonly capacity: number) {}
  get count(): number {
    return this.messages.length;
  }
  get sizeInBytes(): number {
    return this.messages.length;
  }
  tryAddMessage(message: ServiceBusMessage): boolean {
    if (this.messages.length >= this.capacity || message.body === 'too large') return false;
    this.messages.push(message);
    return true;
  }
}

class FakeSender implements ServiceBusSenderLike {
  /** Each send: a single message, or the messages of a batch. */
  readonly sends: (ServiceBusMessage | ServiceBusMessage[])[] = [];
  closed = false;
  failWith: Error | undefined;
  constructor(private readonly batchCapacity: number) {}
  sendMessages(messages: ServiceBusMessage | ServiceBusMessageBatch): Promise<void> {
    if (this.failWith) return Promise.reject(this.failWith);
    this.sends.push(messages instanceof FakeBatch ? [...messages.messages] : (messages as ServiceBusMessage));
    return Promise.resolve();
  }
  createMessageBatch(): Promise<ServiceBusMessageBatch> {
    return Promise.resolve(new FakeBatch(this.batchCapacity));
  }
  close(): Promise<void> {
    this.closed = true;
    return Promise.resolve();
  }
}

class FakeClient implements ServiceBusClientLike {
  readonly senders = new Map<string, FakeSender>();
  createdSenders = 0;
  closed = false;
  constructor(private readonly batchCapacity = 100) {}
  createSender(entity: string): FakeSender {
    this.createdSenders += 1;
    const sender = new FakeSender(this.batchCapacity);
    this.senders.set(entity, sender);
    return sender;
  }
  close(): Promise<void> {
    this.closed = true;
    return Promise.resolve();
  }
}

const message = (messageId: string, sessionId?: string): OutgoingMessage => ({
  messageId,
  ...(sessionId === undefined ? {} : { sessionId }),
  body: { messageId },
});
const ids = (send: ServiceBusMessage | ServiceBusMessage[] | undefined): unknown =>
  Array.isArray(send) ? send.map((m) => m.messageId) : send?.messageId;

describe('toServiceBusMessage', () => {
  it('maps every field and marks the body as JSON', () => {
    const properties = { kind: 'user', attempt: 2, urgent: true };
    const mapped = toServiceBusMessage({
      body: { text: 'hi' },
      messageId: 'm-1',
      sessionId: 's-1',
      correlationId: 'c-1',
      subject: 'chat',
      applicationProperties: properties,
    });
    expect(mapped).toEqual({
      body: { text: 'hi' },
      messageId: 'm-1',
      sessionId: 's-1',
      correlationId: 'c-1',
      subject: 'chat',
      applicationProperties: properties,
      contentType: 'application/json',
    });
    expect(mapped.applicationProperties).not.toBe(properties);
  });

  it('sends no keys for fields that are not set', () => {
    expect(toServiceBusMessage({ body: 'x', messageId: 'm-2' })).toStrictEqual({
      body: 'x',
      messageId: 'm-2',
      contentType: 'application/json',
    });
  });
});

describe('createServiceBusPublisher', () => {
  it('creates one sender per entity and reuses it', async () => {
    const client = new FakeClient();
    const publisher = createServiceBusPublisher({ client });
    await publisher.publish('queue-a', message('1'));
    await publisher.publish('queue-a', message('2'));
    await publisher.publish('topic-b', message('3'));

    expect(client.createdSenders).toBe(2);
    expect(client.senders.get('queue-a')!.sends.map(ids)).toEqual(['1', '2']);
    expect(client.senders.get('topic-b')!.sends.map(ids)).toEqual(['3']);
  });

  it('sends one message on its own and several in batches, split where the session changes or a batch is full', async () => {
    const client = new FakeClient(2);
    const publisher = createServiceBusPublisher({ client });
    await publisher.publish('q', [
      message('a1', 'a'),
      message('a2', 'a'),
      message('a3', 'a'),
      message('b1', 'b'),
    ]);
    await publisher.publish('q', [message('solo', 'a')]);

    expect(client.senders.get('q')!.sends.map(ids)).toEqual([['a1', 'a2'], ['a3'], ['b1'], 'solo']);
  });

  it('does nothing for an empty list', async () => {
    const client = new FakeClient();
    await createServiceBusPublisher({ client }).publish('q', []);
    expect(client.createdSenders).toBe(0);
  });

  it('reports a failed send as a DependencyError naming the entity, with the cause', async () => {
    const client = new FakeClient();
    const publisher = createServiceBusPublisher({ client });
    await publisher.publish('q', message('1'));
    const cause = new Error('link detached');
    client.senders.get('q')!.failWith = cause;

    const error: unknown = await publisher.publish('q', message('2')).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DependencyError);
    expect((error as DependencyError).message).toBe("Sending 1 message(s) to 'q' failed: link detached");
    expect((error as DependencyError).cause).toBe(cause);
  });

  it('refuses a message too large for an empty batch', async () => {
    const client = new FakeClient();
    const publisher = createServiceBusPublisher({ client });
    const big: OutgoingMessage = { messageId: 'big', body: 'too large' };
    await expect(publisher.publish('q', [message('1'), big])).rejects.toThrow(/'big' is too large/);
  });

  it('closes its senders but leaves a client it was given to its owner', async () => {
    const client = new FakeClient();
    const publisher = createServiceBusPublisher({ client });
    await publisher.publish('q', message('1'));
    await publisher.close();

    expect(client.senders.get('q')!.closed).toBe(true);
    expect(client.closed).toBe(false);
    await expect(publisher.publish('q', message('2'))).rejects.toThrow(/closed/);
  });

  it('builds its own client from a namespace and credential without connecting', async () => {
    const credential = { getToken: () => Promise.reject(new Error('no token in unit tests')) };
    const publisher = createServiceBusPublisher({
      fullyQualifiedNamespace: 'example.servicebus.windows.net',
      credential,
    });
    await expect(publisher.close()).resolves.toBeUndefined();
  });
});
