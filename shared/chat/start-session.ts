// POST /api/session/start's use-case: a new chat session owned by the caller, under a new id or one the client chose.
// A chosen id already used (by any user, or by a deleted conversation's tombstone) is refused: ConflictError.
import type { Caller } from '../identity/caller.js';
import type { ChatSession } from './contracts.js';
import type { SessionStore } from './session-store.js';

export function startSession(
  sessions: SessionStore,
  caller: Caller,
  sessionId?: string,
): Promise<ChatSession> {
  return sessions.create(caller.userId, sessionId);
}
