// The port through which the SSE relay follows the live events of a user.
// Adapter: Web PubSub (adapters/web-pubsub-event-feed.ts), listening the way a browser does.
import type { ChatEvent } from './contracts.js';

export interface FeedSubscription {
  close(): Promise<void>;
}

export interface UserEventFeed {
  /**
   * Listens to the events sent to a user; resolves once listening, so every event sent after that reaches
   * onEvent (possibly twice, or out of order across a reconnection: callers de-duplicate by seq).
   */
  subscribe(userId: string, onEvent: (event: ChatEvent) => void): Promise<FeedSubscription>;
}
