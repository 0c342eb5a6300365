// Server-Sent Events framing of a turn's events: one frame per event, with the event's seq as the SSE id so a
// reconnecting client sends it back as Last-Event-ID and resumes after it.
import type { ChatEvent, ChatEventType } from './contracts.js';
import { ValidationError } from '../errors.js';

/** Response headers of an event stream. No `connection: keep-alive`: HTTP/2 forbids connection headers. */
export const SSE_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  'content-type': 'text/event-stream; charset=utf-8',
  'cache-control': 'no-cache, no-transform',
  'x-accel-buffering': 'no',
});

/** The SSE event name a turn's error is sent under (its data keeps `type: 'error'`). */
export const SSE_TURN_ERROR_EVENT = 'turn-error';

/** The SSE event name of an event of this type: its type, but never EventSource's own `error`. */
export function sseEventName(type: ChatEventType): string {
  return type === 'error' ? SSE_TURN_ERROR_EVENT : type;
}

/** One event frame; JSON text never holds a raw line break, so the data stays on one line. */
export function formatSseEvent(event: ChatEvent): string {
  return `id: ${event.seq}\nevent: ${sseEventName(event.type)}\ndata: ${JSON.stringify(event)}\n\n`;
}

/** The SSE event name of the notice a stream is closed with before its turn ended (not a ChatEvent: it has no seq). */
export const SSE_STREAM_CLOSED_EVENT = 'stream-closed';

/** Why the server closed a stream before its turn's last event, for the client to read. */
export interface StreamClosedNotice {
  reason: 'not-started';
  message: string;
}

/** The notice frame: no `id:`, so a client's Last-Event-ID stays the last event it had. */
export function formatSseNotice(notice: StreamClosedNotice): string {
  return `event: ${SSE_STREAM_CLOSED_EVENT}\ndata: ${JSON.stringify(notice)}\n\n`;
}

/** A comment frame (ignored by clients, keeps proxies from timing out); line breaks become spaces. */
export function formatSseComment(text: string): string {
  return `: ${text.replace(/[\r\n]+/g, ' ')}\n\n`;
}

/** Tells the client how long to wait before reconnecting. */
export function formatSseRetry(ms: number): string {
  return `retry: ${Math.max(0, Math.trunc(ms))}\n\n`;
}

/**
 * Last-Event-ID header (or the `lastEventId` query parameter browsers' EventSource polyfills use): absent → 0;
 * a non-negative integer → it; anything else → ValidationError with a clear message. The header wins.
 */
export function parseLastEventId(header: string | null, query: string | null): number {
  if (present(header)) return parseSeq(header, 'Last-Event-ID');
  if (present(query)) return parseSeq(query, 'lastEventId');
  return 0;
}

function present(value: string | null): value is string {
  return value !== null && value.trim() !== '';
}

function parseSeq(raw: string, source: string): number {
  const text = raw.trim();
  const value = /^\d+$/.test(text) ? Number(text) : Number.NaN;
  if (Number.isSafeInteger(value)) return value;
  const message = `${source} must be a non-negative integer (the id of the last event received), got ${JSON.stringify(text.slice(0, 40))}.`;
  throw new ValidationError(message, [{ path: source, message }]);
}
