// Stopping a turn (POST /api/chat/{sessionId}/{chatMessageId}/cancel): the caller's own turn only (another user's,
// or an id never posted, is not found). A turn whose stream has ended is left as it is, and the answer says how it
// ended; otherwise the stop is recorded where every instance finds it, and a stream open here is aborted at once.
import { NotFoundError } from '../../errors.js';
import type { Caller } from '../../identity/caller.js';
import { isTerminalEvent, streamingContainers, TURN_EVENTS_CONTAINER } from '../../streaming/contracts.js';
import type { TurnEventStore } from '../../streaming/turn-event-store.js';
import type { TurnCancelOutcome } from '../contracts/http.js';
import type { PostedMessageStore } from '../../conversation/posted-message-store.js';
import type { SessionStore } from '../../conversation/session-store.js';
import type { TurnCancelSignals } from './turn-cancel-signals.js';

export interface CancelTurnServices {
  /** Finds no session once its conversation is being deleted. */
  sessions: Pick<SessionStore, 'find'>;
  /** The messages accepted in each session: a turn exists, for its owner, from its 202 on. */
  posted: Pick<PostedMessageStore, 'find'>;
  /** The turn's event log: a stored terminal event means the turn has ended. */
  events: Pick<TurnEventStore, 'read'>;
  cancellations: Pick<TurnCancelSignals, 'request'>;
  now?: () => Date;
}

/**
 * A turn's events expire this long after they are written; a turn posted longer ago that has none left has ended
 * (its record of ending expired with them), rather than still waiting in the queue.
 */
const EVENTS_KEPT_MS =
  (streamingContainers.find((spec) => spec.id === TURN_EVENTS_CONTAINER)?.defaultTtlSeconds ?? 24 * 60 * 60) *
  1000;

/**
 * The turn then ends as any turn does, with one `message-end` (finish reason `cancelled`) and the text its clients
 * were shown committed as the answer. Asking twice is harmless: the record is created once, and a turn that has
 * ended answers `finished`.
 */
export async function cancelTurn(
  services: CancelTurnServices,
  caller: Caller,
  turn: { sessionId: string; chatMessageId: string },
): Promise<TurnCancelOutcome> {
  const now = services.now?.() ?? new Date();
  const { sessionId, chatMessageId } = turn;
  // All at once: the events are read before ownership is known, but nothing of them is told to a caller who
  // does not own the turn.
  const [session, posted, events] = await Promise.all([
    services.sessions.find(caller.userId, sessionId),
    services.posted.find(caller.userId, sessionId, chatMessageId),
    services.events.read(sessionId, chatMessageId, 0),
  ]);
  if (session === undefined || posted === undefined)
    throw new NotFoundError(`No turn '${chatMessageId}' in a session '${sessionId}' of this user.`);

  const end = events.find(isTerminalEvent);
  if (end !== undefined)
    return {
      sessionId,
      chatMessageId,
      status: 'finished',
      finishReason: end.type === 'message-end' ? end.finishReason : 'error',
    };
  if (events.length === 0 && now.getTime() - Date.parse(posted.postedAt) > EVENTS_KEPT_MS)
    return { sessionId, chatMessageId, status: 'finished' };

  await services.cancellations.request(
    { userId: caller.userId, sessionId, chatMessageId },
    now.toISOString(),
  );
  return { sessionId, chatMessageId, status: 'cancelling' };
}
