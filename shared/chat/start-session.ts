// POST /api/session/start's use-case: a new chat session owned by the caller.
import type { Caller } from '../identity/caller.js';
import type { ChatSession } from '../conversation/session-store.js';
import type { SessionStore } from '../conversation/session-store.js';

export function startSession(sessions: SessionStore, caller: Caller): Promise<ChatSession> {
  return sessions.create(caller.userId);
}
