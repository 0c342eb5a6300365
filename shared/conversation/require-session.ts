// The ownership rule of a session, for every use-case that acts on one: the caller's own session, or not found.
import { NotFoundError } from '../errors.js';
import type { Caller } from '../identity/caller.js';
import type { ChatSession, SessionStore } from './session-store.js';

/** The caller's session; another user's session is reported exactly like an unknown one. */
export async function requireSession(
  sessions: SessionStore,
  caller: Caller,
  sessionId: string,
): Promise<ChatSession> {
  const session = await sessions.find(caller.userId, sessionId);
  if (session === undefined)
    throw new NotFoundError(
      `No session '${sessionId}' for this user: start one with POST /api/session/start.`,
    );
  return session;
}
