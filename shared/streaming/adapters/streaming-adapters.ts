// The streaming area's adapters: the turn event store on Cosmos DB, and live delivery (a group per session), the
// SSE relay's feed (one shared connection per process) and client access on Web PubSub.
import type { Database } from '@azure/cosmos';
import type { WebPubSubServiceClient } from '@azure/web-pubsub';
import type { ClientAccessIssuer } from '../client-access.js';
import { TURN_EVENTS_CONTAINER } from '../contracts.js';
import type { TurnEventSink } from '../turn-event-sink.js';
import type { TurnEventStore } from '../turn-event-store.js';
import type { UserEventFeed } from '../user-event-feed.js';
import { createCosmosTurnEventStore } from './cosmos-turn-event-store.js';
import { createWebPubSubClientAccess } from './web-pubsub-client-access.js';
import { createWebPubSubEventFeed } from './web-pubsub-event-feed.js';
import { createWebPubSubEventSink } from './web-pubsub-event-sink.js';

export interface StreamingAdapters {
  turnEvents: TurnEventStore;
  sink: TurnEventSink;
  feed: UserEventFeed;
  clientAccess: ClientAccessIssuer;
  /** Closes the feed's shared Web PubSub connection (the process is shutting down). */
  close(): Promise<void>;
}

export function createStreamingAdapters(
  database: Database,
  webPubSub: WebPubSubServiceClient,
): StreamingAdapters {
  const feed = createWebPubSubEventFeed(webPubSub);
  return {
    turnEvents: createCosmosTurnEventStore(database.container(TURN_EVENTS_CONTAINER)),
    sink: createWebPubSubEventSink(webPubSub),
    feed,
    clientAccess: createWebPubSubClientAccess(webPubSub),
    close: () => feed.close(),
  };
}
