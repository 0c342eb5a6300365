// A turn as the AI SDK's UI message stream over SSE: what is stored is replayed without the events a discard voided,
// then the live relay follows with the same converter (a discard arriving live becomes reset-step), then [DONE].
import type { OpenStreams } from '../streaming/open-streams.js';
import type { TurnEventStore } from '../streaming/turn-event-store.js';
import type { UserEventFeed } from '../streaming/user-event-feed.js';
import { relayTurnEvents } from '../streaming/turn-event-relay.js';
import { keptEvents } from '../streaming/turn-transcript.js';
import { UiMessageChunker, type UiMessageChunk } from '../streaming/ui-message-chunks.js';

/** The response headers of a UI message stream (`x-vercel-ai-ui-message-stream: v1` tells the AI SDK its version). */
export const UI_MESSAGE_STREAM_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  'content-type': 'text/event-stream; charset=utf-8',
  'cache-control': 'no-cache, no-transform',
  'x-accel-buffering': 'no',
  'x-vercel-ai-ui-message-stream': 'v1',
});

export interface UiTurnStreamServices {
  turnEvents: TurnEventStore;
  feed: UserEventFeed;
  /** A stream with no event for this long ends (the client resumes with GET .../stream). */
  idleTimeoutMs: number;
}

const encoder = new TextEncoder();

function chunkFrames(chunks: readonly UiMessageChunk[]): string {
  return chunks.map((chunk) => `data: ${JSON.stringify(chunk)}\n\n`).join('');
}

const DONE = 'data: [DONE]\n\n';

/**
 * The turn's UI message stream from its start. A client that goes away only ends its relay: the turn runs on
 * in its own worker, whoever reads it. With `openStreams`, a relay takes one of the user's places (429 over the
 * cap) and gives it back when it ends, whichever way.
 */
export async function openUiTurnStream(
  services: UiTurnStreamServices,
  turn: { userId: string; sessionId: string; chatMessageId: string },
  onError: (error: unknown) => void,
  openStreams?: OpenStreams,
): Promise<ReadableStream<Uint8Array>> {
  const { userId, sessionId, chatMessageId } = turn;
  const stored = await services.turnEvents.read(sessionId, chatMessageId, 0);
  const chunker = new UiMessageChunker();
  const replayed = chunkFrames(keptEvents(stored).flatMap((event) => chunker.push(event)));
  const lastSeq = stored.at(-1)?.seq ?? 0;
  if (chunker.finished) return textStream(replayed + DONE);
  const release = openStreams?.take(userId);
  const live = relayTurnEvents({
    userId,
    sessionId,
    chatMessageId,
    afterSeq: lastSeq,
    store: services.turnEvents,
    feed: services.feed,
    idleTimeoutMs: services.idleTimeoutMs,
    onError,
    ...(release === undefined ? {} : { onEnd: release }),
    frame: (event) => chunkFrames(chunker.push(event)) + (chunker.finished ? DONE : ''),
  });
  return prepend(encoder.encode(replayed), live);
}

function textStream(text: string): ReadableStream<Uint8Array> {
  return new ReadableStream<Uint8Array>({
    start(controller) {
      controller.enqueue(encoder.encode(text));
      controller.close();
    },
  });
}

/** `first`, then what `rest` streams; cancelling the result cancels `rest` (the relay stops following the turn). */
function prepend(first: Uint8Array, rest: ReadableStream<Uint8Array>): ReadableStream<Uint8Array> {
  const reader = rest.getReader();
  let sentFirst = first.byteLength === 0;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (!sentFirst) {
        sentFirst = true;
        controller.enqueue(first);
        return;
      }
      const { done, value } = await reader.read();
      if (done) controller.close();
      else controller.enqueue(value);
    },
    cancel(reason) {
      return reader.cancel(reason);
    },
  });
}
