// Reads a turn's events from GET /api/stream/{sessionId}/{chatMessageId} after a given seq: how the transport
// fills a gap in what Web PubSub delivered, and how it follows a turn while the WebSocket is down.
import { EventSourceParserStream } from 'eventsource-parser/stream';
import type { ChatEvent } from '../../../shared/streaming/contracts.js';
import type { ApiClient } from '../api/client';

/** Yields the turn's events after `afterSeq` until its stream ends (after its last event, or when idle). */
export async function* readTurnEvents(
  api: ApiClient,
  sessionId: string,
  chatMessageId: string,
  afterSeq: number,
  signal: AbortSignal,
): AsyncGenerator<ChatEvent> {
  const path = `/api/stream/${encodeURIComponent(sessionId)}/${encodeURIComponent(chatMessageId)}`;
  const query = afterSeq > 0 ? `?lastEventId=${afterSeq}` : '';
  const response = await api.fetch(`${path}${query}`, { headers: { accept: 'text/event-stream' }, signal });
  // 204: the turn has ended and nothing after afterSeq is left.
  if (response.status === 204 || response.body === null) return;
  const events = response.body
    .pipeThrough(new TextDecoderStream())
    .pipeThrough(new EventSourceParserStream());
  const reader = events.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      if (value.data === '') continue;
      yield JSON.parse(value.data) as ChatEvent;
    }
  } finally {
    reader.releaseLock();
    await response.body.cancel().catch(() => undefined);
  }
}
