// The port of a turn's stored events: the record a late or reconnecting client reads (the SSE relay) and every
// activity writes through its TurnStream. Adapter: Cosmos DB (adapters/cosmos-turn-event-store.ts).
import type { ChatEvent } from './contracts.js';

export interface TurnEventStore {
  /** Stores events; storing an event again (same turn and seq) is a no-op, so a retried write is safe. */
  append(events: readonly ChatEvent[]): Promise<void>;
  /** The turn's stored events with seq > afterSeq, in seq order. */
  read(sessionId: string, chatMessageId: string, afterSeq: number): Promise<ChatEvent[]>;
}
