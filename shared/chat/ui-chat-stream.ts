// A turn as the AI SDK's UI message stream over SSE: what is stored is replayed without the events a discard voided,
// then the live relay follows with the same converter (a discard arriving live becomes reset-step), then [DONE].
import type { OpenStreams } from '../streaming/open-streams.js';
import type { TurnEventStore } from '../streaming/turn-event-store.js';
import type { UserEventFeed } from '../streaming/user-event-feed.js';
import { relayTurnEvents } from '../streaming/turn-event-relay.js';
import { keptEvents } from '../streaming/turn-transcript.js';
import { pendingApprovals } from '../streaming/pending-approvals.js';
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

/** A message that goes on after its user answered the approvals `answered`, the first requested at `afterSeq`. */
export interface ContinuedMessage {
  afterSeq: number;
  answered: readonly string[];
}

const encoder = new TextEncoder();

function chunkFrames(chunks: readonly UiMessageChunk[]): string {
  return chunks.map((chunk) => `data: ${JSON.stringify(chunk)}\n\n`).join('');
}

const DONE = 'data: [DONE]\n\n';

/**
 * The turn's UI message stream from its start, or, `continued` after its user answered approvals, the same message
 * going on from the first of their requests (its `start` names the same message). A turn that waits for its
 * user's yes ends this stream with `finish` once its approval request is sent. A client that goes away only ends its
 * relay: the turn runs on in its own worker, whoever reads it. With `openStreams`, a relay takes one of the user's
 * places (429 over the cap) and gives it back when it ends, whichever way.
 */
export async function openUiTurnStream(
  services: UiTurnStreamServices,
  turn: { userId: string; sessionId: string; chatMessageId: string },
  onError: (error: unknown) => void,
  openStreams?: OpenStreams,
  continued?: ContinuedMessage,
): Promise<ReadableStream<Uint8Array>> {
  const continueAfter = continued?.afterSeq ?? 0;
  const answered = new Set(continued?.answered ?? []);
  const { userId, sessionId, chatMessageId } = turn;
  const stored = await services.turnEvents.read(sessionId, chatMessageId, 0);
  const chunker = new UiMessageChunker();
  const shown = keptEvents(stored).filter((event) => event.seq > continueAfter);
  const chunks = shown.flatMap((event) => chunker.push(event));
  if (pendingApprovals(stored).some((request) => !answered.has(request.approvalId)))
    chunks.push(...chunker.pause());
  const replayed = chunkFrames(chunks);
  const lastSeq = Math.max(stored.at(-1)?.seq ?? 0, continueAfter);
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
    endsAfter: (event) => event.type === 'tool-approval-request',
    frame: (event) => {
      const framed = chunker.push(event);
      if (event.type === 'tool-approval-request') framed.push(...chunker.pause());
      return chunkFrames(framed) + (chunker.finished ? DONE : '');
    },
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
