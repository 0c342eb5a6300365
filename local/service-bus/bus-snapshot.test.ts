import { describe, expect, it } from 'vitest';
import {
  SNAPSHOT_FORMAT,
  SNAPSHOT_VERSION,
  busSnapshotSchema,
  inconsistencies,
  restoreStore,
  toStoreSnapshot,
  type BusSnapshot,
  type StoreSnapshot,
} from './bus-snapshot.js';
import { DeliveryQueue, type StoredMessage } from './delivery-queue.js';

function stored(sequenceNumber: number, sessionId: string | undefined, deliveryCount = 0): StoredMessage {
  return {
    bodyText: JSON.stringify({ n: sequenceNumber }),
    messageId: `m-${sequenceNumber}`,
    sessionId,
    correlationId: undefined,
    subject: undefined,
    contentType: 'application/json',
    applicationProperties: { kind: 'x' },
    sequenceNumber,
    enqueuedTimeUtc: new Date(Date.UTC(2025, 0, 1, 0, 0, sequenceNumber)),
    deliveryCount,
  };
}

/** The snapshot as it would come back from the file. */
function throughJson(store: StoreSnapshot): StoreSnapshot {
  return JSON.parse(JSON.stringify(store)) as StoreSnapshot;
}

describe('store snapshots', () => {
  it('keep waiting and locked messages in sequence order and make the locked ones available again', () => {
    const queue = new DeliveryQueue('q', true);
    [stored(1, 'a'), stored(2, 'b'), stored(3, 'a')].forEach((m) => queue.enqueue(m));
    queue.lockNextSession();
    const inFlight = queue.takeFromSession('a')!;
    inFlight.deliveryCount = 1;

    const snapshot = throughJson(toStoreSnapshot(queue));
    expect(snapshot.messages.map((m) => [m.sequenceNumber, m.deliveryCount])).toEqual([
      [1, 1],
      [2, 0],
      [3, 0],
    ]);

    const restored = new DeliveryQueue('q', true);
    expect(restoreStore(restored, snapshot, 10)).toBe(0);
    expect(restored.lockNextSession()).toBe('a');
    const again = restored.takeFromSession('a')!;
    expect(again).toMatchObject({ messageId: 'm-1', deliveryCount: 1, applicationProperties: { kind: 'x' } });
    expect(again.enqueuedTimeUtc).toEqual(inFlight.enqueuedTimeUtc);
    expect(restored.activeMessageCount).toBe(3);
  });

  it('dead-letters a restored message whose deliveries are used up, after the saved dead letters', () => {
    const queue = new DeliveryQueue('q', false);
    queue.enqueue(stored(1, undefined));
    queue.enqueue(stored(2, undefined));
    const poisoned = queue.takeNext()!;
    poisoned.deliveryCount = 2;
    queue.deadLetter(poisoned, 'Custom', 'by the handler');
    const lastTry = queue.takeNext()!;
    lastTry.deliveryCount = 3;

    const restored = new DeliveryQueue('q', false);
    expect(restoreStore(restored, throughJson(toStoreSnapshot(queue)), 3)).toBe(1);
    expect(restored.activeMessageCount).toBe(0);
    expect(restored.deadLetters).toMatchObject([
      {
        messageId: 'm-1',
        deliveryCount: 2,
        deadLetterReason: 'Custom',
        deadLetterErrorDescription: 'by the handler',
      },
      { messageId: 'm-2', deliveryCount: 3, deadLetterReason: 'MaxDeliveryCountExceeded' },
    ]);
  });
});

describe('inconsistencies', () => {
  function snapshot(entities: BusSnapshot['entities']): BusSnapshot {
    return busSnapshotSchema.parse({
      format: SNAPSHOT_FORMAT,
      version: SNAPSHOT_VERSION,
      savedAt: new Date(0).toISOString(),
      entities,
    });
  }
  const message = (sequenceNumber: number, sessionId?: string) => ({
    sequenceNumber,
    messageId: `m-${sequenceNumber}`,
    sessionId,
    contentType: 'application/json',
    applicationProperties: {},
    enqueuedTimeUtc: new Date(0).toISOString(),
    deliveryCount: 0,
    bodyText: 'null',
  });

  it('accepts a consistent file', () => {
    const queue = {
      kind: 'queue' as const,
      name: 'q',
      lastSequenceNumber: 2,
      duplicateDetection: [],
      requiresSession: true,
      messages: [message(1, 's'), message(2, 's')],
      deadLetters: [],
    };
    expect(inconsistencies(snapshot([queue]))).toEqual([]);
  });

  it('reports repeated names, repeated or too high sequence numbers and session-less messages', () => {
    const problems = inconsistencies(
      snapshot([
        {
          kind: 'queue',
          name: 'Q',
          lastSequenceNumber: 1,
          duplicateDetection: [],
          requiresSession: true,
          messages: [message(1, 's'), message(1)],
          deadLetters: [{ ...message(5), deadLetterReason: 'r', deadLetterErrorDescription: 'd' }],
        },
        { kind: 'topic', name: 'q', lastSequenceNumber: 0, duplicateDetection: [], subscriptions: [] },
      ]),
    );
    expect(problems).toEqual([
      "'Q' holds sequence number 1 twice",
      "'Q' requires sessions but message 'm-1' has no session id",
      "'Q' holds sequence number 5, above the last one given (1)",
      "the entity 'q' appears twice",
    ]);
  });

  it('refuses a body that is not JSON text', () => {
    const parsed = busSnapshotSchema.safeParse({
      format: SNAPSHOT_FORMAT,
      version: SNAPSHOT_VERSION,
      savedAt: new Date(0).toISOString(),
      entities: [
        {
          kind: 'queue',
          name: 'q',
          lastSequenceNumber: 1,
          duplicateDetection: [],
          requiresSession: false,
          messages: [{ ...message(1), bodyText: '{' }],
          deadLetters: [],
        },
      ],
    });
    expect(parsed.success).toBe(false);
  });
});
