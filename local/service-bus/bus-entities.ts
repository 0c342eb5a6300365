// The local Service Bus's namespace: its queues and topics (each with its delivery queues, duplicate detection and
// sequence numbers), and how a receiver's source is found in it.
import { DependencyError } from '../../shared/errors.js';
import type { MessageSource } from './bus-options.js';
import type { SubscriptionSnapshot } from './bus-snapshot.js';
import type { DeliveryQueue } from './delivery-queue.js';
import type { DuplicateDetector } from './duplicate-detector.js';

export interface Queue {
  kind: 'queue';
  name: string;
  store: DeliveryQueue;
  duplicates: DuplicateDetector;
  lastSequenceNumber: number;
}

export interface Topic {
  kind: 'topic';
  name: string;
  subscriptions: Map<string, DeliveryQueue>;
  duplicates: DuplicateDetector;
  lastSequenceNumber: number;
  /** Subscriptions the data file holds and the app no longer declares: saved again as they were. */
  keptSubscriptions: SubscriptionSnapshot[];
}

/** The queue or subscription a receiver names, in the namespace `entities` (keys in lower case). */
export function storeOf(entities: ReadonlyMap<string, Queue | Topic>, source: MessageSource): DeliveryQueue {
  if ('queueName' in source) {
    const entity = entities.get(source.queueName.toLowerCase());
    if (entity?.kind === 'queue') return entity.store;
    throw new DependencyError('Service Bus', `The queue '${source.queueName}' could not be found.`);
  }
  const entity = entities.get(source.topicName.toLowerCase());
  const store =
    entity?.kind === 'topic' ? entity.subscriptions.get(source.subscriptionName.toLowerCase()) : undefined;
  if (store) return store;
  throw new DependencyError(
    'Service Bus',
    `The subscription '${source.topicName}/Subscriptions/${source.subscriptionName}' could not be found.`,
  );
}
