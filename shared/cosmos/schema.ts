// The Cosmos DB database and containers the product uses. The local runtime provisions them from this
// definition and infra/ declares the same (infra/generated/definitions.json is generated from it and checked by a test).

export interface ContainerDefinition {
  /** Container id. */
  id: string;
  /** Partition key path. */
  partitionKey: string;
  /** Default time to live in seconds; -1 = items expire only when they set `ttl`; undefined = never. */
  defaultTtlSeconds?: number;
  /** What the container holds, for readers of infra and the portal. */
  purpose: string;
}

export const COSMOS_DATABASE = 'chat';

export const SESSIONS_CONTAINER = 'sessions';
export const HOT_CONVERSATIONS_CONTAINER = 'hot-conversations';
export const CONVERSATIONS_CONTAINER = 'conversations';
export const TURN_EVENTS_CONTAINER = 'turn-events';

/** 24 h, the hot store's time to live (seed 000: the hot cache keeps active conversations for a day). */
export const HOT_STORE_TTL_SECONDS = 24 * 60 * 60;

export const cosmosContainers: readonly ContainerDefinition[] = [
  {
    id: SESSIONS_CONTAINER,
    partitionKey: '/userId',
    purpose: 'Chat sessions, one document per session, owned by a user.',
  },
  {
    id: HOT_CONVERSATIONS_CONTAINER,
    partitionKey: '/sessionId',
    defaultTtlSeconds: HOT_STORE_TTL_SECONDS,
    purpose:
      'Working memory of active conversations (the hot store) and the state of their running turns; expires 24 h after the last write.',
  },
  {
    id: TURN_EVENTS_CONTAINER,
    partitionKey: '/sessionId',
    defaultTtlSeconds: HOT_STORE_TTL_SECONDS,
    purpose:
      'The streamed events of each turn, one document per event, so a client that joins late or reconnects gets the whole response; expires after 24 h.',
  },
  {
    id: CONVERSATIONS_CONTAINER,
    partitionKey: '/userId',
    purpose: 'Long-term conversation history, one document per session.',
  },
];
