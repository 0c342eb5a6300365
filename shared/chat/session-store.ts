// The port of chat sessions: one per session, owned by a user. Reading a session always goes through its
// owner, so another user's session is simply not found; nor is one whose conversation is being deleted. Adapter: Cosmos DB (adapters/cosmos-session-store.ts).
import type { ChatSession } from './contracts.js';

export interface SessionStore {
  create(userId: string): Promise<ChatSession>;
  /**
   * The caller's session, or undefined when the caller has no session with that id, or its conversation is being
   * deleted.
   */
  find(userId: string, sessionId: string): Promise<ChatSession | undefined>;
  /**
   * Marks the session as being deleted (find no longer answers it, so no turn is posted to it); false when the
   * caller has no session with that id. Marking again is harmless: a retried delete resumes.
   */
  markDeleting(userId: string, sessionId: string): Promise<boolean>;
  /** Removes the session's document; false when there was none. */
  delete(userId: string, sessionId: string): Promise<boolean>;
}
