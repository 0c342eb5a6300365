// A chat client that rides out a backend that crashes and comes back, as a careful app does: it retries a request
// that got no answer (a re-post keeps its chatMessageId and text, the idempotent retry), and follows a turn over
// SSE across disconnects with Last-Event-ID, keeping each seq once, until the turn's terminal event.
import { isDeepStrictEqual } from 'node:util';
import { createParser } from 'eventsource-parser';
import type { StreamedEvent } from './turn-assembly.js';

export const DEV_IDENTITY_HEADER = 'x-ms-client-principal-id';

/** How long a client waits before trying again while the backend is away. */
const RETRY_DELAY_MS = 150;
/** A request with no answer for this long is given up and retried (a crash may leave a socket silent). */
const REQUEST_TIMEOUT_MS = 15_000;

export interface Backend {
  /** The base URL while the backend is known; requests are retried until it answers. */
  url(): string | undefined;
  /** The run's clock, in ms, for the logs. */
  now(): number;
  /** Aborted when the run gives up: every loop here ends then. */
  signal: AbortSignal;
}

/** An answer the client will not retry (a 4xx): the product refused what it should have accepted. */
export class Refused extends Error {
  constructor(
    readonly status: number,
    readonly body: string,
  ) {
    super(`${status}: ${problemDetail(body)}`);
  }
}

export class GaveUp extends Error {}

/**
 * Sends a request until it gets an answer that is neither a network failure nor a 5xx; `expected` is the status
 * that means success. Every attempt is logged.
 */
async function requestUntilAnswered(
  backend: Backend,
  what: string,
  log: string[],
  send: (base: string, signal: AbortSignal) => Promise<Response>,
  expected: number,
): Promise<{ body: string; atMs: number }> {
  for (;;) {
    if (backend.signal.aborted) throw new GaveUp(`${what}: the run ended before it was answered`);
    const base = backend.url();
    if (base === undefined) {
      await pause(RETRY_DELAY_MS, backend.signal);
      continue;
    }
    try {
      const signal = AbortSignal.any([backend.signal, AbortSignal.timeout(REQUEST_TIMEOUT_MS)]);
      const response = await send(base, signal);
      const body = await response.text();
      if (response.status === expected) return { body, atMs: backend.now() };
      log.push(`${time(backend.now())} ${what} → ${response.status}`);
      if (response.status < 500) throw new Refused(response.status, body);
    } catch (error) {
      if (error instanceof Refused) throw error;
      log.push(`${time(backend.now())} ${what} → no answer (${describeFailure(error)})`);
    }
    await pause(RETRY_DELAY_MS, backend.signal);
  }
}

/** POST /api/session/start until a 201; the new session. A lost answer only orphans a session nobody uses. */
export async function startSession(
  backend: Backend,
  userId: string,
  log: string[],
): Promise<{ sessionId: string; atMs: number }> {
  const { body, atMs } = await requestUntilAnswered(
    backend,
    'POST session/start',
    log,
    (base, signal) =>
      fetch(`${base}/api/session/start`, {
        method: 'POST',
        headers: { [DEV_IDENTITY_HEADER]: userId },
        signal,
      }),
    201,
  );
  return { sessionId: (JSON.parse(body) as { sessionId: string }).sessionId, atMs };
}

/** POST /api/chat until a 202, re-posting the same chatMessageId and text; the stream URL it answered with. */
export async function postMessage(
  backend: Backend,
  userId: string,
  message: { sessionId: string; chatMessageId: string; text: string },
  log: string[],
): Promise<{ stream: string; atMs: number }> {
  const { body, atMs } = await requestUntilAnswered(
    backend,
    'POST chat',
    log,
    (base, signal) =>
      fetch(`${base}/api/chat`, {
        method: 'POST',
        headers: { [DEV_IDENTITY_HEADER]: userId, 'content-type': 'application/json' },
        body: JSON.stringify(message),
        signal,
      }),
    202,
  );
  return { stream: (JSON.parse(body) as { stream: string }).stream, atMs };
}

/** What following a turn gathered. */
export interface FollowedTurn {
  /** Every seq received, once (the first arrival), by seq. */
  events: Map<number, StreamedEvent>;
  /** A seq that arrived again with different content, or a frame whose id or name disagrees with its data. */
  anomalies: string[];
  /** One line per connection and per refusal, with the run's clock. */
  log: string[];
  /** When the terminal event arrived (run clock), if it did. */
  terminalAtMs?: number;
  /** A 4xx that ended the following (the product refused a stream it should serve). */
  refused?: string;
}

export function isTerminal(event: StreamedEvent): boolean {
  return event.type === 'message-end' || event.type === 'error';
}

/**
 * Follows a turn's SSE stream (the URL as the chat endpoint returned it, ticket and all, plus the identity header)
 * until a terminal event, reconnecting after any disconnect with Last-Event-ID, retrying while the backend is
 * down. `onEvent` hears each new seq.
 */
export async function followTurn(
  backend: Backend,
  userId: string,
  streamUrl: string,
  onEvent: (event: StreamedEvent) => void = () => {},
): Promise<FollowedTurn> {
  const turn: FollowedTurn = { events: new Map(), anomalies: [], log: [] };
  let lastEventId: string | undefined;
  let failuresInARow = 0;
  const hasTerminal = () => [...turn.events.values()].some(isTerminal);
  while (!hasTerminal() && !backend.signal.aborted) {
    const base = backend.url();
    if (base === undefined) {
      await pause(RETRY_DELAY_MS, backend.signal);
      continue;
    }
    const from = lastEventId ?? '0';
    const headers: Record<string, string> = { [DEV_IDENTITY_HEADER]: userId, accept: 'text/event-stream' };
    if (lastEventId !== undefined) headers['last-event-id'] = lastEventId;
    const openedAt = backend.now();
    let received = 0;
    let opened = false;
    let outcome: string;
    try {
      const response = await fetch(new URL(streamUrl, base), { headers, signal: backend.signal });
      if (response.status === 204) {
        outcome = '204 (the stream says the client has the end)';
        if (!hasTerminal())
          turn.anomalies.push(`${time(backend.now())} 204 after ${from} without a terminal event`);
        turn.log.push(`${time(backend.now())} GET after ${from} → ${outcome}`);
        break;
      }
      if (response.status !== 200) {
        const body = await response.text();
        if (response.status < 500) {
          turn.refused = `GET after ${from} → ${response.status}: ${problemDetail(body)}`;
          turn.log.push(`${time(backend.now())} ${turn.refused}`);
          break;
        }
        outcome = `${response.status}`;
      } else {
        opened = true;
        outcome = await readFrames(response, (frame) => {
          received++;
          lastEventId = frame.id ?? lastEventId;
          accept(turn, frame, backend.now(), onEvent);
        });
      }
    } catch (error) {
      outcome = `no answer (${describeFailure(error)})`;
    }
    failuresInARow = opened ? 0 : failuresInARow + 1;
    // The log keeps every connection that opened, and one line per run of failed attempts.
    if (opened || failuresInARow === 1)
      turn.log.push(
        `${time(openedAt)}-${time(backend.now())} GET after ${from} → +${received}${received ? ` (to ${lastEventId})` : ''}, ${outcome}`,
      );
    if (!hasTerminal()) await pause(received > 0 ? 0 : RETRY_DELAY_MS, backend.signal);
  }
  const terminal = [...turn.events.values()].find(isTerminal);
  if (terminal === undefined && backend.signal.aborted)
    turn.log.push(`${time(backend.now())} gave up: the run ended before a terminal event`);
  return turn;
}

interface Frame {
  id: string | undefined;
  event: string | undefined;
  data: string;
}

function accept(
  turn: FollowedTurn,
  frame: Frame,
  atMs: number,
  onEvent: (event: StreamedEvent) => void,
): void {
  let event: StreamedEvent;
  try {
    event = JSON.parse(frame.data) as StreamedEvent;
  } catch {
    turn.anomalies.push(`${time(atMs)} a frame whose data is not JSON: ${frame.data.slice(0, 80)}`);
    return;
  }
  if (frame.id !== String(event.seq) || frame.event !== event.type)
    turn.anomalies.push(
      `${time(atMs)} frame id ${frame.id} / event ${frame.event} carries seq ${event.seq} ${event.type}`,
    );
  const earlier = turn.events.get(event.seq);
  if (earlier === undefined) {
    turn.events.set(event.seq, event);
    if (isTerminal(event)) turn.terminalAtMs = atMs;
    onEvent(event);
  } else if (!isDeepStrictEqual(earlier, event)) {
    turn.anomalies.push(
      `${time(atMs)} seq ${event.seq} arrived again with different content: first ${brief(earlier)}, then ${brief(event)}`,
    );
  }
}

/** Reads SSE frames until the stream ends; how it ended ('ended' or why it broke). */
async function readFrames(response: Response, onFrame: (frame: Frame) => void): Promise<string> {
  const parser = createParser({
    onEvent: (message) => onFrame({ id: message.id, event: message.event, data: message.data }),
  });
  if (response.body === null) return 'no body';
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return 'ended';
      parser.feed(value);
    }
  } catch (error) {
    return `cut (${describeFailure(error)})`;
  }
}

/** The SSE stream of a finished turn from its first event, as a client that joins late reads it. */
export async function replayTurn(
  baseUrl: string,
  userId: string,
  streamUrl: string,
  timeoutMs: number,
): Promise<{ events: StreamedEvent[]; outcome: string }> {
  const events: StreamedEvent[] = [];
  try {
    const response = await fetch(new URL(streamUrl, baseUrl), {
      headers: { [DEV_IDENTITY_HEADER]: userId, accept: 'text/event-stream' },
      signal: AbortSignal.timeout(timeoutMs),
    });
    if (response.status !== 200)
      return { events, outcome: `${response.status}: ${(await response.text()).slice(0, 300)}` };
    const outcome = await readFrames(response, (frame) =>
      events.push(JSON.parse(frame.data) as StreamedEvent),
    );
    return { events, outcome };
  } catch (error) {
    return { events, outcome: `no answer (${describeFailure(error)})` };
  }
}

/** An event in a line: its seq, type and the field that says most about it. */
export function brief(event: StreamedEvent | undefined): string {
  if (event === undefined) return 'nothing';
  const detail =
    typeof event.delta === 'string'
      ? JSON.stringify(event.delta.length > 24 ? `${event.delta.slice(0, 24)}…` : event.delta)
      : event.type === 'error'
        ? `${String(event.code)} ${JSON.stringify(event.message)}`
        : event.type === 'message-end'
          ? String(event.finishReason)
          : event.type === 'discard'
            ? `${String(event.fromSeq)}..${String(event.toSeq)}`
            : '';
  return `#${event.seq} ${event.type}${detail ? ` ${detail}` : ''}`;
}

export function time(ms: number): string {
  return `${(ms / 1000).toFixed(1)}s`;
}

/** The `detail` of a problem+json body, or the start of any other body. */
function problemDetail(body: string): string {
  try {
    const detail = (JSON.parse(body) as { detail?: unknown }).detail;
    if (typeof detail === 'string') return detail;
  } catch {
    // Not JSON: shown as it is.
  }
  return body.slice(0, 200);
}

function describeFailure(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  return cause?.code ?? cause?.message ?? error.name;
}

/** Waits, or less when the run is aborted. */
function pause(ms: number, signal: AbortSignal): Promise<void> {
  if (ms <= 0 || signal.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
    function done() {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
  });
}
