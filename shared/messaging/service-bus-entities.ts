// The settings every Service Bus entity of the product shares, and the shape of an entity's declaration. The
// entities themselves are gathered by the composition layer (shared/app/service-bus-entities.ts).

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
