// What the local Service Bus is built from (its limits, clock, latency model, data file and entities) and how a
// receiver names a queue or subscription and its concurrency.
import type { AzureLatencyModel } from '../latency/azure-latency.js';
import type { QueueDefinition, TopicDefinition } from '../../shared/messaging/service-bus-entities.js';

export interface LocalServiceBusOptions {
  /** Deliveries before a message is dead-lettered; default MAX_DELIVERY_COUNT. */
  maxDeliveryCount?: number;
  /** Default DUPLICATE_DETECTION_WINDOW_MS. */
  duplicateDetectionWindowMs?: number;
  /** Pause before a failed message is handed out again (default 50; tests use 0..5). */
  redeliveryDelayMs?: number;
  /** Clock of the duplicate-detection window and of enqueuedTimeUtc (tests pass a fake one). */
  now?: () => number;
  /** Answers sends and hands out messages as late as Service Bus would (undefined: at once). */
  latency?: AzureLatencyModel | undefined;
  /**
   * While any queue delivery runs, topic-subscription deliveries (sessions, for sessionful subscriptions) start at
   * most this many at once across the broker (undefined: each subscription at its own concurrency). See DeliveryGate.
   */
  maxBackgroundWhileBusy?: number | undefined;
}

export interface LocalServiceBusOpenOptions extends LocalServiceBusOptions {
  /** Where the broker's state is kept across restarts; undefined = memory only. */
  dataFile?: string | undefined;
  queues?: readonly QueueDefinition[];
  topics?: readonly TopicDefinition[];
  /** Settlements are saved at most this long after they happen (default 200). */
  flushDelayMs?: number;
  /** Reports a failed background save (default: console.error); the next save writes everything again. */
  onSaveError?: (error: unknown) => void;
}

export type MessageSource = { queueName: string } | { topicName: string; subscriptionName: string };

export interface ReceiveOptions {
  /** Sessions locked at once (the host's maxConcurrentSessions); default 8. */
  maxConcurrentSessions?: number | undefined;
  /** Messages handled at once on an entity without sessions (the host's maxConcurrentCalls); default 16. */
  maxConcurrentCalls?: number | undefined;
  /** When given, must match the entity, as the host's listener requires. */
  isSessionsEnabled?: boolean;
}

export function wholeNumber(name: string, value: number, minimum: number): number {
  if (!Number.isInteger(value) || value < minimum) {
    throw new RangeError(`${name} must be a whole number of at least ${minimum} (got ${value}).`);
  }
  return value;
}
