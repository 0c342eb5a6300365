// The port of chat sessions: one per session, owned by a user. Reading a session always goes through its
// owner, so another user's session is simply not found. Adapter: Cosmos DB (adapters/cosmos-session-store.ts).
import type { ChatSession } from './contracts.js';

export interface SessionStore {
  create(userId: string): Promise<ChatSession>;
  /** The caller's session, or undefined when the caller has no session with that id. */
  find(userId: string, sessionId: string): Promise<ChatSession | undefined>;
}
