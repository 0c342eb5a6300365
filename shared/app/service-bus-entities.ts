// The Service Bus queues and topics the product uses, gathered from the areas' contracts for the local runtime's
// broker and for infra/ (through scripts/generate-definitions.ts and the drift test).
import { MESSAGE_COMPLETED_TOPIC } from '../conversation/message-completed.js';
import { USER_MESSAGES_QUEUE } from '../chat/contracts/queue.js';
import { HISTORY_SUBSCRIPTION } from '../history/contracts.js';
import { KNOWLEDGE_INGEST_QUEUE } from '../knowledge/contracts.js';
import { MEMORY_SUBSCRIPTION } from '../memory/contracts.js';
import type { QueueDefinition, TopicDefinition } from '../messaging/service-bus-entities.js';

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
