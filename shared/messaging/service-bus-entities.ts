// The Service Bus queues and topics the product uses, and the entity settings they share. Each area names its
// entities in its contracts; this list gathers them for the local runtime's broker and for infra/ (through
// scripts/generate-definitions.ts and the drift test).
import { MESSAGE_COMPLETED_TOPIC, USER_MESSAGES_QUEUE } from '../chat/contracts.js';
import { HISTORY_SUBSCRIPTION } from '../history/contracts.js';
import { MEMORY_SUBSCRIPTION } from '../memory/contracts.js';

/** Max deliveries before Service Bus dead-letters a message (the entity setting in infra/ and locally). */
export const MAX_DELIVERY_COUNT = 10;

/** Duplicate detection window of the queues and topics, in ISO 8601 (Service Bus) and milliseconds. */
export const DUPLICATE_DETECTION_WINDOW = 'PT10M';
export const DUPLICATE_DETECTION_WINDOW_MS = 10 * 60 * 1000;

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
];

export const serviceBusTopics: readonly TopicDefinition[] = [
  {
    name: MESSAGE_COMPLETED_TOPIC,
    subscriptions: [
      { name: HISTORY_SUBSCRIPTION, requiresSession: true },
      { name: MEMORY_SUBSCRIPTION, requiresSession: true },
    ],
  },
];
