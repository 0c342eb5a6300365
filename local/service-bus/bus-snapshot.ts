// The local Service Bus's data file format: per queue and subscription the live messages and dead letters,
// per queue and topic the last sequence number and the duplicate-detection history. Schema, consistency
// checks and conversions only; local-service-bus.ts decides when to save and restore.
import { z } from 'zod';
import type { DeadLetterRecord, DeliveryQueue, StoredMessage } from './delivery-queue.js';
import { MAX_DELIVERY_COUNT_EXCEEDED } from './entity-receiver.js';

export const SNAPSHOT_FORMAT = 'local-service-bus-snapshot';
export const SNAPSHOT_VERSION = 1;

const jsonText = z.string().refine(
  (text) => {
    try {
      JSON.parse(text);
      return true;
    } catch {
      return false;
    }
  },
  { message: 'not JSON text' },
);

const messageSnapshotSchema = z.object({
  sequenceNumber: z.number().int().positive(),
  messageId: z.string().min(1),
  sessionId: z.string().optional(),
  correlationId: z.string().optional(),
  subject: z.string().optional(),
  contentType: z.string(),
  applicationProperties: z.record(z.string(), z.union([z.string(), z.number(), z.boolean()])),
  enqueuedTimeUtc: z.iso.datetime(),
  /** Deliveries started so far, the one cut short by a stop included. */
  deliveryCount: z.number().int().nonnegative(),
  /** The body as the JSON text that went over the wire. */
  bodyText: jsonText,
});

const deadLetterSnapshotSchema = messageSnapshotSchema.extend({
  deadLetterReason: z.string(),
  deadLetterErrorDescription: z.string(),
});

const storeSnapshotSchema = z.object({
  requiresSession: z.boolean(),
  /** Waiting and locked messages in sequence order (which is also their order within each session). */
  messages: z.array(messageSnapshotSchema),
  deadLetters: z.array(deadLetterSnapshotSchema),
});

const entityFields = {
  name: z.string().min(1),
  lastSequenceNumber: z.number().int().nonnegative(),
  /** Message ids accepted within the duplicate-detection window, with when, oldest first. */
  duplicateDetection: z.array(z.tuple([z.string(), z.iso.datetime()])),
};

const queueSnapshotSchema = z.object({
  kind: z.literal('queue'),
  ...entityFields,
  ...storeSnapshotSchema.shape,
});

const subscriptionSnapshotSchema = z.object({ name: z.string().min(1), ...storeSnapshotSchema.shape });

const topicSnapshotSchema = z.object({
  kind: z.literal('topic'),
  ...entityFields,
  subscriptions: z.array(subscriptionSnapshotSchema),
});

const entitySnapshotSchema = z.discriminatedUnion('kind', [queueSnapshotSchema, topicSnapshotSchema]);

export const busSnapshotSchema = z.object({
  format: z.literal(SNAPSHOT_FORMAT),
  version: z.literal(SNAPSHOT_VERSION),
  savedAt: z.iso.datetime(),
  entities: z.array(entitySnapshotSchema),
});

export type BusSnapshot = z.infer<typeof busSnapshotSchema>;
export type EntitySnapshot = z.infer<typeof entitySnapshotSchema>;
export type QueueSnapshot = z.infer<typeof queueSnapshotSchema>;
export type TopicSnapshot = z.infer<typeof topicSnapshotSchema>;
export type SubscriptionSnapshot = z.infer<typeof subscriptionSnapshotSchema>;
export type StoreSnapshot = z.infer<typeof storeSnapshotSchema>;
type MessageSnapshot = z.infer<typeof messageSnapshotSchema>;

/**
 * What the schema cannot see but a restore relies on, as a list of problems (empty when consistent):
 * unique names (case-insensitive, as Service Bus names are), unique sequence numbers no higher than the
 * entity's last, and a session id on every live message of an entity that requires sessions.
 */
export function inconsistencies(snapshot: BusSnapshot): string[] {
  const problems: string[] = [];
  const names = new Set<string>();
  for (const entity of snapshot.entities) {
    const key = entity.name.toLowerCase();
    if (names.has(key)) problems.push(`the entity '${entity.name}' appears twice`);
    names.add(key);
    const stores: [string, StoreSnapshot][] =
      entity.kind === 'queue'
        ? [[entity.name, entity]]
        : entity.subscriptions.map((s) => [`${entity.name}/Subscriptions/${s.name}`, s]);
    const subscriptionNames = new Set<string>();
    for (const [path, store] of stores) {
      if (subscriptionNames.has(path.toLowerCase())) problems.push(`'${path}' appears twice`);
      subscriptionNames.add(path.toLowerCase());
      problems.push(...storeInconsistencies(path, store, entity.lastSequenceNumber));
    }
  }
  return problems;
}

function storeInconsistencies(path: string, store: StoreSnapshot, lastSequenceNumber: number): string[] {
  const problems: string[] = [];
  const sequenceNumbers = new Set<number>();
  for (const message of store.messages) {
    if (sequenceNumbers.has(message.sequenceNumber)) {
      problems.push(`'${path}' holds sequence number ${message.sequenceNumber} twice`);
    }
    sequenceNumbers.add(message.sequenceNumber);
    if (store.requiresSession && message.sessionId === undefined) {
      problems.push(`'${path}' requires sessions but message '${message.messageId}' has no session id`);
    }
  }
  for (const message of [...store.messages, ...store.deadLetters]) {
    if (message.sequenceNumber > lastSequenceNumber) {
      problems.push(
        `'${path}' holds sequence number ${message.sequenceNumber}, above the last one given (${lastSequenceNumber})`,
      );
    }
  }
  return problems;
}

function toMessageSnapshot(message: StoredMessage): MessageSnapshot {
  return {
    sequenceNumber: message.sequenceNumber,
    messageId: message.messageId,
    sessionId: message.sessionId,
    correlationId: message.correlationId,
    subject: message.subject,
    contentType: message.contentType,
    applicationProperties: { ...message.applicationProperties },
    enqueuedTimeUtc: message.enqueuedTimeUtc.toISOString(),
    deliveryCount: message.deliveryCount,
    bodyText: message.bodyText,
  };
}

function fromMessageSnapshot(snapshot: MessageSnapshot): StoredMessage {
  return {
    bodyText: snapshot.bodyText,
    messageId: snapshot.messageId,
    sessionId: snapshot.sessionId,
    correlationId: snapshot.correlationId,
    subject: snapshot.subject,
    contentType: snapshot.contentType,
    applicationProperties: { ...snapshot.applicationProperties },
    sequenceNumber: snapshot.sequenceNumber,
    enqueuedTimeUtc: new Date(snapshot.enqueuedTimeUtc),
    deliveryCount: snapshot.deliveryCount,
  };
}

function toDeadLetterSnapshot(record: DeadLetterRecord): StoreSnapshot['deadLetters'][number] {
  return {
    ...toMessageSnapshot(record.message),
    deadLetterReason: record.reason,
    deadLetterErrorDescription: record.description,
  };
}

function fromDeadLetterSnapshot(snapshot: StoreSnapshot['deadLetters'][number]): DeadLetterRecord {
  return {
    message: fromMessageSnapshot(snapshot),
    reason: snapshot.deadLetterReason,
    description: snapshot.deadLetterErrorDescription,
  };
}

export function toHistorySnapshot(
  history: readonly (readonly [string, number])[],
): EntitySnapshot['duplicateDetection'] {
  return history.map(([id, acceptedAt]) => [id, new Date(acceptedAt).toISOString()]);
}

export function fromHistorySnapshot(history: EntitySnapshot['duplicateDetection']): [string, number][] {
  return history.map(([id, acceptedAt]) => [id, Date.parse(acceptedAt)]);
}

/** A queue's or subscription's state as the file keeps it. */
export function toStoreSnapshot(store: DeliveryQueue): StoreSnapshot {
  const { messages, deadLetters } = store.snapshot();
  return {
    requiresSession: store.requiresSession,
    messages: messages.map(toMessageSnapshot),
    deadLetters: deadLetters.map(toDeadLetterSnapshot),
  };
}

/**
 * Puts a saved state into an empty store. Messages locked when the process stopped are waiting again with
 * the deliveries they had, as after a lock expiry; one whose last allowed delivery was cut short is
 * dead-lettered, as Service Bus does when that lock expires. Returns how many were dead-lettered so.
 */
export function restoreStore(
  store: DeliveryQueue,
  snapshot: StoreSnapshot,
  maxDeliveryCount: number,
): number {
  const live: StoredMessage[] = [];
  const deadLetters = snapshot.deadLetters.map(fromDeadLetterSnapshot);
  let exhausted = 0;
  for (const message of snapshot.messages.map(fromMessageSnapshot)) {
    if (message.deliveryCount < maxDeliveryCount) {
      live.push(message);
      continue;
    }
    exhausted += 1;
    deadLetters.push({
      message,
      reason: MAX_DELIVERY_COUNT_EXCEEDED,
      description:
        `Message could not be consumed after ${message.deliveryCount} delivery attempts ` +
        '(the last one was cut short when the local runtime stopped).',
    });
  }
  store.restore(live, deadLetters);
  return exhausted;
}
