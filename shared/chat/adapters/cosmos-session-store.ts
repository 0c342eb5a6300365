// The Cosmos DB adapter of SessionStore: one document per session in the `sessions` container, partitioned by the
// owner's user id, so a read through another user's partition finds nothing.
import type { Container } from '@azure/cosmos';
import { cosmosFailure, readItem } from '../../cosmos/adapters/cosmos-items.js';
import { newSessionId, sessionDocumentSchema, type ChatSession, type SessionDocument } from '../contracts.js';
import type { SessionStore } from '../session-store.js';

export function createCosmosSessionStore(
  container: Container,
  now: () => Date = () => new Date(),
): SessionStore {
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
      const stored = await readItem(container, sessionId, userId, 'the session', sessionDocumentSchema);
      if (stored === undefined) return undefined;
      const { resource } = stored;
      return { sessionId: resource.sessionId, userId: resource.userId, createdAt: resource.createdAt };
    },
  };
}
