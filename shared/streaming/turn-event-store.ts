// The port of a turn's event log, the truth of what its clients see: every batch of events is stored
// here before it is sent live, and late or reconnecting clients (the SSE relay) read it back.
// Adapter: Cosmos DB (adapters/cosmos-turn-event-store.ts).
import { ConflictError } from '../errors.js';
import type { ChatEvent } from './contracts.js';

/** Another writer already stored different events under these seqs: this writer must stop, not overwrite. */
export class EventSeqTakenError extends ConflictError {
  constructor(chatMessageId: string, firstSeq: number) {
    super(
      `Events from seq ${firstSeq} of turn '${chatMessageId}' are already stored with other content; ` +
        'another attempt of this step is writing the turn.',
    );
    this.name = 'EventSeqTakenError';
  }
}

export interface TurnEventStore {
  /**
   * Stores one batch (events of one turn with contiguous seqs) as one record keyed by its first seq. Storing the
   * same batch again is a no-op that says so; a different batch under a stored first seq → EventSeqTakenError.
   */
  append(batch: readonly ChatEvent[]): Promise<'stored' | 'already-stored'>;
  /** The turn's stored events with seq > afterSeq, in seq order. */
  read(sessionId: string, chatMessageId: string, afterSeq: number): Promise<ChatEvent[]>;
}
