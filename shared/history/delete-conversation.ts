// DELETE /api/history/conversations/{sessionId}: removes the conversation everywhere it lives, for good. The session's
// mark, then the header's, come before any purge; the session's outlives the delete as the tombstone writers check
// (docs/architecture.md, "Deleting") and becomes final last, so a DELETE that failed half-way is retried and resumes.
import { turnInstanceId } from '../conversation/turn-ids.js';
import type { SessionStore } from '../conversation/session-store.js';
import { mapBounded } from '../bounded-parallel.js';
import {
  isFinishedStatus,
  OrchestrationWaitTimeout,
  type OrchestrationClient,
} from '../durable/orchestration-client.js';
import { DependencyError, NotFoundError } from '../errors.js';
import {
  forgetConversation,
  type ForgetServices,
  type ForgottenConversation,
} from '../memory/forget-memories.js';
import type { ConversationEraser } from './conversation-eraser.js';
import type { ConversationHeaders } from './conversation-headers.js';
import type { ConversationMessages } from './conversation-messages.js';

/**
 * Stops the model streams of a session's turns running in this process, and says how many it stopped. A port, so
 * history needs nothing of chat: the composition root passes chat's turn cancel signals.
 */
export interface SessionTurnStops {
  stopSession(sessionId: string): number;
}

export interface DeleteConversationServices {
  headers: ConversationHeaders;
  messages: ConversationMessages;
  sessions: SessionStore;
  eraser: ConversationEraser;
  orchestrations: OrchestrationClient;
  /** Aborts the conversation's model streams open in this process (others find the tombstone by their poll). */
  stops: SessionTurnStops;
  /** Long-term memory: the conversation's summary and the facts it taught. */
  memory: ForgetServices;
}

/** Turns stopped and purged at once: a long conversation's turns go quickly without flooding the task hub. */
const PURGE_PARALLELISM = 8;
/** How long a running turn is given to stop once terminated. */
const STOP_TIMEOUT_MS = 10_000;

export interface DeletedConversation {
  /** Turns whose orchestration was purged. */
  turns: number;
  /** Items removed from the hot store and turn-events. */
  turnItems: number;
  /** Items removed from the long-term store (messages, exchange entries, digest). */
  historyItems: number;
  /** What long-term memory forgot. */
  memory: ForgottenConversation;
}

/**
 * Unknown, another user's (neither a header nor a session of the caller), or deleted already (a tombstone and no
 * header) → NotFoundError.
 */
export async function deleteConversation(
  services: DeleteConversationServices,
  userId: string,
  sessionId: string,
): Promise<DeletedConversation> {
  // The session first, then its header (a marked header is always a conversation being deleted), both before anything
  // is purged: the history worker's last write is conditional on the header's mark, which no other write of the
  // header removes, so a turn it records without meeting the mark was stored before the purge below.
  const marked = await services.sessions.markDeleting(userId, sessionId);
  const headerMarked = await services.headers.markDeleting(userId, sessionId);
  if (!headerMarked && !marked) throw new NotFoundError(`No conversation '${sessionId}' for this user.`);
  // From the mark on, no writer keeps anything of the conversation: a step of a running turn stops streaming (here
  // at once, elsewhere at its next poll) and writes nothing more, and whatever it wrote before is purged below.
  services.stops.stopSession(sessionId);

  const posted = await services.eraser.postedMessageIds(userId, sessionId);
  const purged = await mapBounded(posted, PURGE_PARALLELISM, (chatMessageId) =>
    stopAndPurge(services.orchestrations, turnInstanceId(sessionId, chatMessageId)),
  );
  const turns = purged.filter(Boolean).length;
  await services.headers.delete(userId, sessionId);
  const memory = await forgetConversation(services.memory, userId, sessionId);
  // Long-term items before the hot store: a read that passed its header check just before the delete and rebuilds
  // working memory from them meanwhile writes that copy before the hot store is erased, not after.
  const historyItems = await services.messages.deleteAll(userId, sessionId);
  const turnItems = await services.eraser.eraseTurnData(sessionId);
  await services.eraser.erasePosted(userId, sessionId);
  await services.sessions.markDeleted(userId, sessionId);
  return { turns, turnItems, historyItems, memory };
}

/** Terminates the turn if it still runs, waits for it to stop, then purges it; false when there was none. */
async function stopAndPurge(orchestrations: OrchestrationClient, instanceId: string): Promise<boolean> {
  const status = await orchestrations.getStatus(instanceId);
  if (status === undefined) return false;
  if (!isFinishedStatus(status.runtimeStatus)) {
    try {
      await orchestrations.terminate(instanceId, 'The conversation was deleted.');
      await orchestrations.waitForCompletion(instanceId, STOP_TIMEOUT_MS);
    } catch (error) {
      if (error instanceof NotFoundError) return false; // purged meanwhile, by a concurrent delete
      if (error instanceof OrchestrationWaitTimeout)
        throw new DependencyError(
          'durable-functions',
          'A turn of the conversation is still stopping: retry the delete in a moment.',
          { cause: error },
        );
      throw error;
    }
  }
  return orchestrations.purge(instanceId);
}
