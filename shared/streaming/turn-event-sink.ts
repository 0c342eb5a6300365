// The port of live delivery: a turn's events go to every live WebSocket connection of its user.
// Adapter: Web PubSub (adapters/web-pubsub-event-sink.ts).
import type { ChatEvent } from './contracts.js';

export interface TurnEventSink {
  /** Sends events, in order, to every live connection of the user. */
  send(userId: string, events: readonly ChatEvent[]): Promise<void>;
}
