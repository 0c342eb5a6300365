// What a client that follows the streaming protocol shows for a turn, written from the protocol alone (not
// from product code): content deltas joined in seq order, except those a `discard` event voids.

/** A streamed event as the wire carries it; only `type` and `seq` are relied on by every event. */
export interface StreamedEvent {
  type: string;
  seq: number;
  [field: string]: unknown;
}

export interface AssembledTurn {
  /** The answer's text, as shown. */
  text: string;
  /** The reasoning text, as shown. */
  reasoning: string;
  /** The seqs a discard voided. */
  voided: number[];
  /** Ways the events break the protocol (a discard that reaches forward, a malformed delta). */
  problems: string[];
}

/** Event types a discard voids: what one model round streams. */
const VOIDABLE = new Set(['content', 'reasoning-delta', 'reasoning-end', 'tool-call', 'tool-result']);

export function assembleTurn(events: readonly StreamedEvent[]): AssembledTurn {
  const ordered = [...events].sort((a, b) => a.seq - b.seq);
  const problems: string[] = [];
  const voided = new Set<number>();
  for (const event of ordered) {
    if (event.type !== 'discard') continue;
    const { fromSeq, toSeq } = event;
    if (typeof fromSeq !== 'number' || typeof toSeq !== 'number' || fromSeq > toSeq) {
      problems.push(`discard at seq ${event.seq} has no valid range (${String(fromSeq)}..${String(toSeq)})`);
      continue;
    }
    if (toSeq >= event.seq)
      problems.push(`discard at seq ${event.seq} voids ${fromSeq}..${toSeq}, which is not all before it`);
    for (const voidable of ordered)
      if (voidable.seq >= fromSeq && voidable.seq <= toSeq && VOIDABLE.has(voidable.type))
        voided.add(voidable.seq);
  }
  let text = '';
  let reasoning = '';
  for (const event of ordered) {
    if (voided.has(event.seq)) continue;
    if (event.type !== 'content' && event.type !== 'reasoning-delta') continue;
    if (typeof event.delta !== 'string') {
      problems.push(`${event.type} at seq ${event.seq} has no text delta`);
      continue;
    }
    if (event.type === 'content') text += event.delta;
    else reasoning += event.delta;
  }
  return { text, reasoning, voided: [...voided].sort((a, b) => a - b), problems };
}
