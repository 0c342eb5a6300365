// The ports of turn streaming. Activities write a turn's events through a TurnEventStore (the record a late
// or reconnecting client reads) and a TurnEventSink (live delivery to the user's WebSocket connections); the
// SSE relay reads the store and listens to a UserEventFeed. Adapters: Cosmos DB and Web PubSub.
import type { ChatEvent } from '../chat/events.js';

export interface TurnEventStore {
  /** Stores events; storing an event again (same turn and seq) is a no-op, so a retried write is safe. */
  append(events: readonly ChatEvent[]): Promise<void>;
  /** The turn's stored events with seq > afterSeq, in seq order. */
  read(sessionId: string, chatMessageId: string, afterSeq: number): Promise<ChatEvent[]>;
}

export interface TurnEventSink {
  /** Sends events, in order, to every live connection of the user. */
  send(userId: string, events: readonly ChatEvent[]): Promise<void>;
}

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
