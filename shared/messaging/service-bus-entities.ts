// The Service Bus queues and topics the product uses, and the entity settings they share. Each area names its
// entities in its contracts; this list gathers them for the local runtime's broker and for infra/ (through
// scripts/generate-definitions.ts and the drift test).
import { MESSAGE_COMPLETED_TOPIC } from '../conversation/message-completed.js';
import { USER_MESSAGES_QUEUE } from '../chat/contracts/queue.js';
import { HISTORY_SUBSCRIPTION } from '../history/contracts.js';
import { KNOWLEDGE_INGEST_QUEUE } from '../knowledge/contracts.js';
import { MEMORY_SUBSCRIPTION } from '../memory/contracts.js';

/** Max deliveries before Service Bus dead-letters a message (the entity setting in infra/ and locally). */
export const MAX_DELIVERY_COUNT = 10;

/** Duplicate detection window of the queues and topics, in ISO 8601 (Service Bus) and milliseconds. */
export const DUPLICATE_DETECTION_WINDOW = 'PT10M';
export const DUPLICATE_DETECTION_WINDOW_MS = 10 * 60 * 1000;

/**
 * How long a message waits in a topic subscription before Service Bus drops it (ISO 8601). Long enough to outlast
 * a consumer's outage over a long weekend and its fix; short enough that a subscription whose consumer is gone holds
 * at most a week of events, which bounds its share of the topic's size quota (1 GB by default: a week of some
 * 100,000 turns a day at about 1 KB an event). Expired messages are not dead-lettered (see
 * scripts/generate-definitions.ts). Queues keep Service Bus's default, no expiry: each is declared with its
 * consumer, and a user's message answered late is better than one that vanished.
 */
export const SUBSCRIPTION_MESSAGE_TTL = 'P7D';

/** The app setting prefix of the Service Bus connection used by the triggers (identity-based in Azure). */
export const SERVICE_BUS_CONNECTION = 'ServiceBusConnection';

export interface QueueDefinition {
  name: string;
  requiresSession: boolean;
}
export interface SubscriptionDefinition {
  name: string;
  requiresSession: boolean;
}
export interface TopicDefinition {
  name: string;
  subscriptions: SubscriptionDefinition[];
}

export const serviceBusQueues: readonly QueueDefinition[] = [
  { name: USER_MESSAGES_QUEUE, requiresSession: true },
  // Documents are independent of each other: no sessions, so several are indexed at once.
  { name: KNOWLEDGE_INGEST_QUEUE, requiresSession: false },
];

/**
 * A subscription is declared here together with its consumer (the history and memory workers name theirs in their
 * contracts): one nobody receives from keeps every message until it expires, and a full topic refuses the sends
 * of the chat turn itself. Publishing to a topic without subscriptions succeeds and drops the message, in Azure
 * and locally.
 */
export const serviceBusTopics: readonly TopicDefinition[] = [
  {
    name: MESSAGE_COMPLETED_TOPIC,
    subscriptions: [
      { name: HISTORY_SUBSCRIPTION, requiresSession: true },
      { name: MEMORY_SUBSCRIPTION, requiresSession: true },
    ],
  },
];
