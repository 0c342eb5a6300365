// Puts one turn's events in seq order from two sources (Web PubSub batches and the SSE stream): each seq is
// delivered once, and a hole in the sequence is reported so the caller reads the missing events from SSE.
import type { ChatEvent } from '../../../shared/streaming/contracts.js';

export class TurnEventOrder {
  private nextSeq = 1;
  private readonly pending = new Map<number, ChatEvent>();
  private ended = false;

  /** The seq of the last event delivered (0 before any): the Last-Event-ID to read on from. */
  get lastSeq(): number {
    return this.nextSeq - 1;
  }

  /** Whether the turn's last event (message-end or error) has been delivered. */
  get finished(): boolean {
    return this.ended;
  }

  /** Whether events arrived beyond a hole: the events in between must be read from the stream endpoint. */
  get hasGap(): boolean {
    return !this.ended && this.pending.size > 0;
  }

  /** Takes events in any order, duplicates included; answers the ones now deliverable, in order. */
  accept(events: readonly ChatEvent[]): ChatEvent[] {
    for (const event of events)
      if (event.seq >= this.nextSeq && !this.pending.has(event.seq)) this.pending.set(event.seq, event);
    const ready: ChatEvent[] = [];
    for (let event = this.pending.get(this.nextSeq); event !== undefined && !this.ended;) {
      this.pending.delete(this.nextSeq);
      this.nextSeq += 1;
      ready.push(event);
      if (event.type === 'message-end' || event.type === 'error') {
        this.ended = true;
        this.pending.clear();
      }
      event = this.pending.get(this.nextSeq);
    }
    return ready;
  }
}
