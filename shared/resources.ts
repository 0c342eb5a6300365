// Names of the Azure resources the code talks to. They live here once: functions, adapters, the local
// runtime, tests and (through the drift test) infra/ all read them from this module.

/** Service Bus queue that carries posted chat messages to the chat worker (sessions on: FIFO per chat session). */
export const USER_MESSAGES_QUEUE = 'user-messages';

/** Service Bus topic on which a committed turn is announced; each consumer has its own subscription. */
export const MESSAGE_COMPLETED_TOPIC = 'message-completed';
export const HISTORY_SUBSCRIPTION = 'history';
export const MEMORY_SUBSCRIPTION = 'memory';

/** Max deliveries before Service Bus dead-letters a message (the entity setting in infra/ and locally). */
export const MAX_DELIVERY_COUNT = 10;

/** Duplicate detection window of the queues and topics, in ISO 8601 (Service Bus) and milliseconds. */
export const DUPLICATE_DETECTION_WINDOW = 'PT10M';
export const DUPLICATE_DETECTION_WINDOW_MS = 10 * 60 * 1000;

/** Web PubSub hub the chat events are sent through. */
export const WEB_PUBSUB_HUB = 'chat';

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
