// What a client that follows the event protocol makes of a turn's events: the `discard` events void what a
// crashed attempt streamed, and the content that remains is the answer. The turn's steps use it to resume
// after a crash and to keep what a failed turn had shown; tests use it to check clients against replays.
import type { KnowledgeSource } from '../conversation/sources.js';
import type { ChatEvent, ChatEventType } from './contracts.js';

/** Events a `discard` may void: the streamed output of one model round. */
const DISCARDABLE: ReadonlySet<ChatEventType> = new Set([
  'content',
  'reasoning-delta',
  'reasoning-end',
  'tool-call',
]);

export function isDiscardable(event: ChatEvent): boolean {
  return DISCARDABLE.has(event.type);
}

/** The events a client keeps: every event but the discardable ones a later `discard` voids. */
export function keptEvents(events: readonly ChatEvent[]): ChatEvent[] {
  const voided = (seq: number) =>
    events.some((event) => event.type === 'discard' && event.fromSeq <= seq && seq <= event.toSeq);
  return events.filter((event) => !(isDiscardable(event) && voided(event.seq)));
}

/** The answer text a client shows: the kept `content` deltas, in seq order. */
export function answerText(events: readonly ChatEvent[]): string {
  return [...keptEvents(events)]
    .sort((a, b) => a.seq - b.seq)
    .map((event) => (event.type === 'content' ? event.delta : ''))
    .join('');
}

/** The knowledge-base sources a client shows: those of the last `sources` event (each replaces the one before). */
export function shownSources(events: readonly ChatEvent[]): KnowledgeSource[] {
  const last = [...events].sort((a, b) => a.seq - b.seq).findLast((event) => event.type === 'sources');
  return last?.type === 'sources' ? last.sources : [];
}

/**
 * The seqs a retried round must void: from the first to the last discardable event still kept among `events`
 * (the events an earlier attempt of the round stored), or undefined when it showed nothing.
 */
export function discardRange(events: readonly ChatEvent[]): { fromSeq: number; toSeq: number } | undefined {
  const kept = keptEvents(events).filter(isDiscardable);
  const first = kept[0];
  const last = kept.at(-1);
  return first && last ? { fromSeq: first.seq, toSeq: last.seq } : undefined;
}
