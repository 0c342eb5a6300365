// The port through which the SSE relay follows the live events of a session.
// Adapter: Web PubSub (adapters/web-pubsub-event-feed.ts): one shared connection per process, in the groups of the
// sessions that open SSE streams follow.
import type { ChatEvent } from './contracts.js';

export interface FeedSubscription {
  close(): Promise<void>;
}

export interface UserEventFeed {
  /**
   * Listens to the live events of the user's session; resolves once listening, so every event sent after that
   * reaches onEvent (possibly twice, or out of order across a reconnection: callers de-duplicate by seq, and read
   * the store for what a reconnection lost).
   */
  subscribe(
    turn: { userId: string; sessionId: string },
    onEvent: (event: ChatEvent) => void,
  ): Promise<FeedSubscription>;
}
