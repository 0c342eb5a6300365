// GET /api/stream's use-case: a turn's events as SSE for its owner, from the start or after the event the client
// already has. A client that already has the turn's last event gets 'ended' (nothing to relay); another user's
// session is reported exactly like an unknown one.
import type { Caller } from '../identity/caller.js';
import { requireSession } from '../conversation/require-session.js';
import type { SessionStore } from '../conversation/session-store.js';
import type { OpenStreams } from './open-streams.js';
import { relayTurnEvents, resumePoint } from './turn-event-relay.js';
import type { TurnEventStore } from './turn-event-store.js';
import type { UserEventFeed } from './user-event-feed.js';

export interface OpenTurnStreamServices {
  sessions: SessionStore;
  turnEvents: TurnEventStore;
  feed: UserEventFeed;
  /** An SSE stream with no event for this long ends; the client reconnects with Last-Event-ID. */
  idleTimeoutMs: number;
  /** A stream of a turn with no event yet ends after this long, with a `stream-closed` notice. */
  startTimeoutMs: number;
  /** The streams open in this instance: one over the user's cap is refused (429). */
  openStreams: OpenStreams;
}

export async function openTurnStream(
  services: OpenTurnStreamServices,
  caller: Caller,
  turn: { sessionId: string; chatMessageId: string; afterSeq: number },
  onError: (error: unknown) => void,
): Promise<ReadableStream<Uint8Array> | 'ended'> {
  const { sessionId, chatMessageId, afterSeq } = turn;
  await requireSession(services.sessions, caller, sessionId);
  if ((await resumePoint(services.turnEvents, { sessionId, chatMessageId }, afterSeq)) === 'ended')
    return 'ended';
  const release = services.openStreams.take(caller.userId);
  return relayTurnEvents({
    userId: caller.userId,
    sessionId,
    chatMessageId,
    afterSeq,
    store: services.turnEvents,
    feed: services.feed,
    idleTimeoutMs: services.idleTimeoutMs,
    startTimeoutMs: services.startTimeoutMs,
    onEnd: release,
    onError,
  });
}
