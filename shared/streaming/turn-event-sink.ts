// The port of live delivery: a turn's events go to the live connections that follow its session.
// Adapter: Web PubSub (adapters/web-pubsub-event-sink.ts), one group per session.
import type { ChatEvent } from './contracts.js';

export interface TurnEventSink {
  /** Sends a batch of a turn's events, in seq order, as ONE message to the connections following the session. */
  send(turn: { userId: string; sessionId: string }, events: readonly ChatEvent[]): Promise<void>;
}
