// Chat sessions: one document per session in the `sessions` container, partitioned by the owner's user id.
// Reading a session always goes through its owner's partition, so another user's session is simply not found
// (its existence is not revealed).
import type { Container, Database } from '@azure/cosmos';
import { SESSIONS_CONTAINER } from '../cosmos/schema.js';
import { cosmosFailure, readItem } from '../cosmos/items.js';
import { newSessionId } from './ids.js';

export interface ChatSession {
  sessionId: string;
  userId: string;
  createdAt: string;
}

export interface SessionStore {
  create(userId: string): Promise<ChatSession>;
  /** The caller's session, or undefined when the caller has no session with that id. */
  find(userId: string, sessionId: string): Promise<ChatSession | undefined>;
}

interface SessionDocument extends ChatSession {
  id: string;
}

export function createCosmosSessionStore(
  database: Database,
  now: () => Date = () => new Date(),
): SessionStore {
  const container: Container = database.container(SESSIONS_CONTAINER);
  return {
    async create(userId) {
      const session: ChatSession = { sessionId: newSessionId(), userId, createdAt: now().toISOString() };
      try {
        await container.items.create<SessionDocument>({ id: session.sessionId, ...session });
      } catch (error) {
        throw cosmosFailure('creating the session', error);
      }
      return session;
    },

    async find(userId, sessionId) {
      const stored = await readItem<SessionDocument>(container, sessionId, userId, 'the session');
      if (stored === undefined) return undefined;
      const { resource } = stored;
      return { sessionId: resource.sessionId, userId: resource.userId, createdAt: resource.createdAt };
    },
  };
}
