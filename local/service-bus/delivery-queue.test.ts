import { describe, expect, it } from 'vitest';
import {
  DeliveryQueue,
  SESSION_ID_MISSING,
  toReceivedMessage,
  type StoredMessage,
} from './delivery-queue.js';

let sequence = 0;
function stored(sessionId: string | undefined, body: unknown = null): StoredMessage {
  sequence += 1;
  return {
    bodyText: JSON.stringify(body),
    messageId: `m-${sequence}`,
    sessionId,
    correlationId: undefined,
    subject: undefined,
    contentType: 'application/json',
    applicationProperties: {},
    sequenceNumber: sequence,
    enqueuedTimeUtc: new Date(0),
    deliveryCount: 0,
  };
}

describe('DeliveryQueue with sessions', () => {
  it('locks the session holding the oldest message, and each session once', () => {
    const queue = new DeliveryQueue('q', true);
    const b1 = stored('b');
    const a1 = stored('a');
    queue.enqueue(b1);
    queue.enqueue(a1);
    queue.enqueue(stored('b'));

    expect(queue.lockNextSession()).toBe('b');
    expect(queue.lockNextSession()).toBe('a');
    expect(queue.lockNextSession()).toBeUndefined();
    expect(queue.takeFromSession('b')).toBe(b1);
    expect(queue.activeMessageCount).toBe(3);
  });

  it('puts an abandoned message back at the head of its session', () => {
    const queue = new DeliveryQueue('q', true);
    const first = stored('a');
    const second = stored('a');
    queue.enqueue(first);
    queue.enqueue(second);
    queue.lockNextSession();
    expect(queue.takeFromSession('a')).toBe(first);

    queue.abandon(first);
    expect(queue.takeFromSession('a')).toBe(first);
    queue.complete(first);
    expect(queue.takeFromSession('a')).toBe(second);
    queue.complete(second);
    queue.unlockSession('a');
    expect(queue.activeMessageCount).toBe(0);
    expect(queue.lockNextSession()).toBeUndefined();
  });

  it('dead-letters a message without a session id, as a session subscription does', () => {
    const queue = new DeliveryQueue('t/Subscriptions/s', true);
    queue.enqueue(stored(undefined, { x: 1 }));
    expect(queue.activeMessageCount).toBe(0);
    expect(queue.deadLetters).toMatchObject([
      {
        body: { x: 1 },
        deadLetterReason: SESSION_ID_MISSING.reason,
        deadLetterErrorDescription: SESSION_ID_MISSING.description,
      },
    ]);
  });
});

describe('DeliveryQueue without sessions', () => {
  it('puts an abandoned message back in sequence order', () => {
    const queue = new DeliveryQueue('q', false);
    const [one, two, three] = [stored(undefined), stored(undefined), stored(undefined)];
    [one, two, three].forEach((m) => queue.enqueue(m));
    expect(queue.takeNext()).toBe(one);
    expect(queue.takeNext()).toBe(two);
    queue.abandon(two);
    queue.abandon(one);
    expect([queue.takeNext(), queue.takeNext(), queue.takeNext()]).toEqual([one, two, three]);
    expect(queue.hasWaiting).toBe(false);
    expect(queue.activeMessageCount).toBe(3);
  });

  it('dead-letters with the delivery count and a fresh copy of the body', () => {
    const queue = new DeliveryQueue('q', false);
    const message = stored(undefined, { list: [1] });
    queue.enqueue(message);
    queue.takeNext();
    message.deliveryCount = 4;
    queue.deadLetter(message, 'MaxDeliveryCountExceeded', 'boom');

    const [deadLettered] = queue.deadLetters;
    expect(deadLettered).toMatchObject({
      deliveryCount: 4,
      deadLetterReason: 'MaxDeliveryCountExceeded',
      deadLetterErrorDescription: 'boom',
    });
    expect(queue.activeMessageCount).toBe(0);
    const received = toReceivedMessage(message, 'lock');
    expect(received.body).toEqual({ list: [1] });
    expect(received.body).not.toBe(deadLettered!.body);
  });
});
