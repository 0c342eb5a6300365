// The Cosmos DB adapter of SessionStore: one document per session in the `sessions` container, partitioned by the
// owner's user id, so a read through another user's partition finds nothing. A session whose conversation is being
// deleted carries `deletingAt` and is found no more.
import type { Container } from '@azure/cosmos';
import { cosmosFailure, deleteItem, readItem } from '../../cosmos/adapters/cosmos-items.js';
import { patchItem } from '../../cosmos/adapters/cosmos-patch.js';
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
      // A patch in the owner's partition: another user's session, like an unknown one, is missing.
      const patched = await patchItem(
        container,
        sessionId,
        userId,
        [{ op: 'set', path: '/deletingAt', value: now().toISOString() }],
        undefined,
        'the session',
      );
      return patched !== 'missing';
    },

    delete(userId, sessionId) {
      return deleteItem(container, sessionId, userId, 'the session');
    },
  };
}
