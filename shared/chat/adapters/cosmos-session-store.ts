// The Cosmos DB adapter of SessionStore: one document per session in the `sessions` container, partitioned by the
// owner's user id, so a read through another user's partition finds nothing. A session whose conversation is being
// deleted carries `deletingAt` and is found no more.
import type { Container } from '@azure/cosmos';
import { cosmosFailure, cosmosStatus, deleteItem, readItem } from '../../cosmos/adapters/cosmos-items.js';
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
      if (stored === undefined || stored.resource.deletingAt !== undefined) return undefined;
      const { resource } = stored;
      return { sessionId: resource.sessionId, userId: resource.userId, createdAt: resource.createdAt };
    },

    async markDeleting(userId, sessionId) {
      try {
        // A patch in the owner's partition: another user's session, like an unknown one, is a 404.
        await container
          .item(sessionId, userId)
          .patch([{ op: 'set', path: '/deletingAt', value: now().toISOString() }]);
        return true;
      } catch (error) {
        if (cosmosStatus(error) === 404) return false;
        throw cosmosFailure('marking the session as being deleted', error);
      }
    },

    delete(userId, sessionId) {
      return deleteItem(container, sessionId, userId, 'the session');
    },
  };
}
