// The streaming area's adapters: the turn event store on Cosmos DB, and live delivery, the SSE relay's feed and
// client access on Web PubSub.
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
}

export function createStreamingAdapters(
  database: Database,
  webPubSub: WebPubSubServiceClient,
): StreamingAdapters {
  return {
    turnEvents: createCosmosTurnEventStore(database.container(TURN_EVENTS_CONTAINER)),
    sink: createWebPubSubEventSink(webPubSub),
    feed: createWebPubSubEventFeed(webPubSub),
    clientAccess: createWebPubSubClientAccess(webPubSub),
  };
}
