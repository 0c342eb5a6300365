// The Cosmos DB adapter of SessionStore: one document per session in the `sessions` container, partitioned by the
// owner's user id, so a read through another user's partition finds nothing. A session whose conversation is being
// deleted carries `deletingAt`; once deleted, `deletedAt` and a `ttl`: the tombstone, found no more but read by writers.
import type { Container } from '@azure/cosmos';
import { cosmosFailure, readItem } from '../../cosmos/adapters/cosmos-items.js';
import { patchItem } from '../../cosmos/adapters/cosmos-patch.js';
import {
  newSessionId,
  SESSION_TOMBSTONE_TTL_SECONDS,
  sessionDocumentSchema,
} from '../contracts/documents.js';
import type { ChatSession, SessionStore } from '../../conversation/session-store.js';

export function createCosmosSessionStore(
  container: Container,
  now: () => Date = () => new Date(),
): SessionStore {
  const read = (userId: string, sessionId: string) =>
    readItem(container, sessionId, userId, 'the session', sessionDocumentSchema);
  return {
    async create(userId) {
      const session: ChatSession = { sessionId: newSessionId(), userId, createdAt: now().toISOString() };
      try {
        await container.items.create({ id: session.sessionId, ...session });
      } catch (error) {
        throw cosmosFailure('creating the session', error);
      }
      return session;
    },

    async find(userId, sessionId) {
      const stored = await read(userId, sessionId);
      if (stored === undefined || stored.resource.deletingAt !== undefined) return undefined;
      const { resource } = stored;
      return { sessionId: resource.sessionId, userId: resource.userId, createdAt: resource.createdAt };
    },

    async isDeleted(userId, sessionId) {
      return (await read(userId, sessionId))?.resource.deletingAt !== undefined;
    },

    async markDeleting(userId, sessionId) {
      // A patch in the owner's partition: another user's session, like an unknown one, is missing; a finished
      // delete's tombstone is left as it is (its delete is not run again).
      const patched = await patchItem(
        container,
        sessionId,
        userId,
        [{ op: 'set', path: '/deletingAt', value: now().toISOString() }],
        'FROM c WHERE NOT IS_DEFINED(c.deletedAt)',
        'the session',
      );
      return patched === 'patched';
    },

    async markDeleted(userId, sessionId) {
      const at = now().toISOString();
      const patched = await patchItem(
        container,
        sessionId,
        userId,
        [
          { op: 'set', path: '/deletedAt', value: at },
          { op: 'set', path: '/ttl', value: SESSION_TOMBSTONE_TTL_SECONDS },
        ],
        undefined,
        'the session',
      );
      return patched !== 'missing';
    },
  };
}
