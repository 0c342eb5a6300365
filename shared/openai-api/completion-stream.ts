// A turn's answer over the OpenAI-compatible API, read from its event log: as Chat Completions SSE chunks ending
// in `[DONE]`, or as one JSON completion that, when the turn runs long, is streamed with leading-space keep-alives.
import { isTerminalEvent, type ChatEvent } from '../streaming/contracts.js';
import type { UiTurnStreamServices } from '../chat/ui-chat-stream.js';
import { relayTurnEvents } from '../streaming/turn-event-relay.js';
import { chunksOf, completionOf, type CompletionMeta, type TurnErrorBody } from './completion-chunks.js';
import type { ChatCompletion } from './contracts.js';
import type { ResponseObject } from './responses-contracts.js';

export type CompletionStreamServices = UiTurnStreamServices;

export interface TurnToFollow {
  userId: string;
  sessionId: string;
  chatMessageId: string;
}

export const COMPLETION_STREAM_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  'content-type': 'text/event-stream; charset=utf-8',
  'cache-control': 'no-cache, no-transform',
  'x-accel-buffering': 'no',
});

const encoder = new TextEncoder();

/**
 * The turn's events from its start, each framed by `frame`, relay after relay until its terminal event: a relay
 * ends after a quiet period, and the answer goes on from the last event it sent. The relays' own frames (retry,
 * keep-alive comments) are passed through; SSE clients ignore them.
 */
export function followTurn(
  services: CompletionStreamServices,
  turn: TurnToFollow,
  frame: (event: ChatEvent) => string,
  onError: (error: unknown) => void,
): ReadableStream<Uint8Array> {
  let afterSeq = 0;
  let ended = false;
  let reader: ReadableStreamDefaultReader<Uint8Array> | undefined;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      for (;;) {
        reader ??= relayTurnEvents({
          ...turn,
          afterSeq,
          store: services.turnEvents,
          feed: services.feed,
          idleTimeoutMs: services.idleTimeoutMs,
          onError,
          frame: (event) => {
            afterSeq = event.seq;
            if (isTerminalEvent(event)) ended = true;
            return frame(event);
          },
        }).getReader();
        const { done, value } = await reader.read();
        if (!done) {
          controller.enqueue(value);
          return;
        }
        reader = undefined;
        if (ended) {
          controller.close();
          return;
        }
      }
    },
    cancel(reason) {
      return reader?.cancel(reason);
    },
  });
}

/** The turn as Chat Completions chunks (`data: {...}` frames), then `data: [DONE]` once it ended. */
export function completionChunkStream(
  services: CompletionStreamServices,
  turn: TurnToFollow,
  meta: CompletionMeta,
  onError: (error: unknown) => void,
): ReadableStream<Uint8Array> {
  const handedBack = { calls: 0 };
  return followTurn(
    services,
    turn,
    (event) => {
      const frames = chunksOf(meta, event, handedBack).map((chunk) => `data: ${JSON.stringify(chunk)}\n\n`);
      return frames.join('') + (event.type === 'message-end' ? 'data: [DONE]\n\n' : '');
    },
    onError,
  );
}

/** What an ended turn answers without streaming: its completion, or its error. */
export type TurnOutcome =
  { kind: 'completion'; body: ChatCompletion | ResponseObject } | { kind: 'error'; body: TurnErrorBody };

/** Waits for the turn's end, reading its events as the stream would, and gives its completion or error. */
export async function awaitCompletion(
  services: CompletionStreamServices,
  turn: TurnToFollow,
  meta: CompletionMeta,
  onError: (error: unknown) => void,
): Promise<TurnOutcome> {
  const events = await awaitTurnEvents(services, turn, onError);
  const failure = events.find((event) => event.type === 'error');
  if (failure?.type === 'error') return { kind: 'error', body: chunksOf(meta, failure)[0] as TurnErrorBody };
  return { kind: 'completion', body: completionOf(meta, events) };
}

/** The turn's events once it has ended, read as its stream would read them. */
export async function awaitTurnEvents(
  services: CompletionStreamServices,
  turn: TurnToFollow,
  onError: (error: unknown) => void,
): Promise<ChatEvent[]> {
  const events: ChatEvent[] = [];
  const reader = followTurn(
    services,
    turn,
    (event) => {
      events.push(event);
      return '';
    },
    onError,
  ).getReader();
  while (!(await reader.read()).done);
  return events;
}

/**
 * A JSON body that starts now and holds `outcome` once it comes: a space every `keepAliveMs` until then (leading
 * whitespace leaves the JSON valid), so no proxy or host limit cuts a long answer's quiet connection.
 */
export function keptAliveJson(
  outcome: Promise<TurnOutcome>,
  keepAliveMs: number,
): ReadableStream<Uint8Array> {
  let timer: ReturnType<typeof setInterval> | undefined;
  return new ReadableStream<Uint8Array>({
    start(controller) {
      controller.enqueue(encoder.encode(' '));
      timer = setInterval(() => controller.enqueue(encoder.encode(' ')), keepAliveMs);
      outcome.then(
        (result) => {
          clearInterval(timer);
          controller.enqueue(encoder.encode(JSON.stringify(result.body)));
          controller.close();
        },
        (error: unknown) => {
          clearInterval(timer);
          controller.error(error);
        },
      );
    },
    cancel() {
      clearInterval(timer);
    },
  });
}
