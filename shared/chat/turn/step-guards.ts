// What every step checks beside its reads: whether the turn's owner stopped it, and whether its conversation was
// deleted; a step on a deleted conversation keeps nothing of the turn (`unlessDeleted`).
import type { ConversationEraser } from '../../history/conversation-eraser.js';
import type { ConversationHeaders } from '../../history/conversation-headers.js';
import type { Logger } from '../../logger.js';
import type { TurnCancelSignals } from '../cancellation/turn-cancel-signals.js';
import type { TurnRef } from '../../conversation/messages.js';
import type { SessionStore } from '../../conversation/session-store.js';

/** What the guards read, and erase when a step's conversation turns out to be deleted. */
export interface GuardServices {
  /** The conversation's tombstone, read before and after each step writes (a deleted conversation keeps nothing). */
  sessions: Pick<SessionStore, 'isDeleted'>;
  /** Removes what a step wrote when its conversation turns out to be deleted (the hot store's and turn-events'). */
  eraser: Pick<ConversationEraser, 'eraseTurnData'>;
  headers: Pick<ConversationHeaders, 'delete'>;
  cancellation: Pick<TurnCancelSignals, 'isRequested'>;
  log?: Pick<Logger, 'warn'>;
}

/**
 * Whether the turn's owner asked to stop it, read beside the step's other reads. A failed read lets the turn go
 * on (a stop is then found by the next check) rather than failing it.
 */
export function stopRequested(services: GuardServices, ref: TurnRef): Promise<boolean> {
  return services.cancellation.isRequested(ref).catch((error: unknown) => {
    services.log?.warn(`Whether turn ${ref.chatMessageId} was stopped could not be read; it goes on:`, error);
    return false;
  });
}

/** What a step returns when its conversation was deleted: it has kept nothing of the turn. */
export const DELETED = Symbol('deleted');

/**
 * Runs a step that writes the turn's data, so that nothing of it outlives a delete of its conversation. The step reads
 * the tombstone before it writes (and writes nothing once it stands); after the step, the tombstone is read again, and
 * if it appeared meanwhile what the conversation holds in the hot store, turn-events and its header is erased. That
 * closes the race with the delete, which marks the session before it purges: a write that lands after the purge
 * was made before this second read, which then sees the mark. A step that fails on a deleted conversation is done
 * too (there is nothing to retry for), after the same erase.
 */
export async function unlessDeleted<T>(
  services: GuardServices,
  ref: TurnRef,
  step: () => Promise<T | typeof DELETED>,
): Promise<T | typeof DELETED> {
  let result: T | typeof DELETED;
  try {
    result = await step();
  } catch (error) {
    if (!(await conversationDeleted(services, ref).catch(() => false))) throw error;
    result = DELETED;
  }
  if (result === DELETED || (await conversationDeleted(services, ref))) {
    await Promise.all([
      services.eraser.eraseTurnData(ref.sessionId),
      services.headers.delete(ref.userId, ref.sessionId),
    ]);
    services.log?.warn(
      `Turn ${ref.chatMessageId} ended: its conversation was deleted, and nothing of the turn is kept.`,
    );
    return DELETED;
  }
  return result;
}

/** Whether the turn's conversation is being deleted or was: a point read of its session's tombstone. */
export function conversationDeleted(services: GuardServices, ref: TurnRef): Promise<boolean> {
  return services.sessions.isDeleted(ref.userId, ref.sessionId);
}
