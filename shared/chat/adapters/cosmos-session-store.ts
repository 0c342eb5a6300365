// The Cosmos DB adapter of SessionStore: one document per session in the `sessions` container, in its owner's
// partition (another user's reads find nothing); a deleted conversation's stays as its tombstone (`deletedAt`, `ttl`).
// A client-chosen id is first claimed by a document in a partition of the id's own, whose `create` is the atomic step.
import type { Container } from '@azure/cosmos';
import { cosmosFailure, cosmosStatus, deleteItem, readItem } from '../../cosmos/adapters/cosmos-items.js';
import { patchItem } from '../../cosmos/adapters/cosmos-patch.js';
import {
  newSessionId,
  SESSION_CLAIM_DOCUMENT_ID,
  SESSION_TOMBSTONE_TTL_SECONDS,
  TEMPORARY_CHAT_TTL_SECONDS,
  temporarySessionTtlSeconds,
  sessionClaimDocumentSchema,
  sessionClaimPartitionKey,
  sessionDocumentSchema,
  type SessionClaimDocument,
} from '../contracts/documents.js';
import type { ChatSession, SessionStore } from '../../conversation/session-store.js';
import { shapeFields } from '../../conversation/conversation-shape.js';

export function createCosmosSessionStore(
  container: Container,
  now: () => Date = () => new Date(),
  temporaryTtlSeconds = TEMPORARY_CHAT_TTL_SECONDS,
): SessionStore {
  const read = (userId: string, sessionId: string) =>
    readItem(container, sessionId, userId, 'the session', sessionDocumentSchema);
  return {
    async create(userId, shape = {}) {
      const session: ChatSession = {
        sessionId: newSessionId(),
        userId,
        createdAt: now().toISOString(),
        ...shapeFields(shape),
      };
      try {
        // A temporary chat's session expires by itself shortly after its expiry job deletes it everywhere.
        const ttl =
          session.temporary === true ? { ttl: temporarySessionTtlSeconds(temporaryTtlSeconds) } : {};
        await container.items.create({ id: session.sessionId, ...session, ...ttl });
      } catch (error) {
        throw cosmosFailure('creating the session', error);
      }
      return session;
    },

    async claim(userId, sessionId, shape = {}) {
      const own = await read(userId, sessionId);
      if (own !== undefined)
        return own.resource.deletingAt === undefined ? sessionOf(own.resource) : undefined;
      const owner = await claimOwner(container, userId, sessionId, now);
      if (owner !== userId) return undefined;
      const session: ChatSession = {
        sessionId,
        userId,
        createdAt: now().toISOString(),
        ...shapeFields(shape),
      };
      try {
        const ttl =
          session.temporary === true ? { ttl: temporarySessionTtlSeconds(temporaryTtlSeconds) } : {};
        await container.items.create({ id: sessionId, ...session, ...ttl });
        return session;
      } catch (error) {
        if (cosmosStatus(error) !== 409) throw cosmosFailure('creating the session', error);
      }
      // The caller's own racing claim made it first (or deleted it since: then it is not found).
      const made = await read(userId, sessionId);
      return made === undefined || made.resource.deletingAt !== undefined
        ? undefined
        : sessionOf(made.resource);
    },

    async markApprovals(userId, sessionId) {
      // A session deleted meanwhile is left alone: its turns keep nothing.
      await patchItem(
        container,
        sessionId,
        userId,
        [{ op: 'set', path: '/approvals', value: true }],
        'FROM c WHERE NOT IS_DEFINED(c.deletingAt)',
        "a session's approvals mark",
      );
    },

    async setProject(userId, sessionId, projectId) {
      const live = 'FROM c WHERE NOT IS_DEFINED(c.deletingAt)';
      const what = "a session's project";
      if (projectId !== null) {
        const set = await patchItem(
          container,
          sessionId,
          userId,
          [{ op: 'set', path: '/projectId', value: projectId }],
          live,
          what,
        );
        return set === 'patched';
      }
      const session = await read(userId, sessionId);
      if (session === undefined || session.resource.deletingAt !== undefined) return false;
      if (session.resource.projectId === undefined) return true;
      const removed = await patchItem(
        container,
        sessionId,
        userId,
        [{ op: 'remove', path: '/projectId' }],
        live,
        what,
      );
      return removed === 'patched';
    },

    async release(userId, sessionId) {
      // The claim document stays: claims are never deleted, so a racing claim's 409 is always followed by a hit.
      await deleteItem(container, sessionId, userId, 'the session');
    },

    async claimant(sessionId) {
      const held = await readItem(
        container,
        SESSION_CLAIM_DOCUMENT_ID,
        sessionClaimPartitionKey(sessionId),
        'the session id claim',
        sessionClaimDocumentSchema,
      );
      return held?.resource.owner;
    },

    async find(userId, sessionId) {
      const stored = await read(userId, sessionId);
      if (stored === undefined || stored.resource.deletingAt !== undefined) return undefined;
      return sessionOf(stored.resource);
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

function sessionOf(resource: ChatSession): ChatSession {
  const { sessionId, userId, createdAt, model, memory, assistant, projectId, temporary, approvals } =
    resource;
  return {
    sessionId,
    userId,
    createdAt,
    ...shapeFields({ model, memory, assistant, projectId, temporary }),
    ...(approvals ? { approvals } : {}),
  };
}

/** Who holds a client-chosen id: the caller when the claim's create wins (or the caller won it before). */
async function claimOwner(
  container: Container,
  userId: string,
  sessionId: string,
  now: () => Date,
): Promise<string> {
  const partitionKey = sessionClaimPartitionKey(sessionId);
  const claim: SessionClaimDocument = {
    id: SESSION_CLAIM_DOCUMENT_ID,
    userId: partitionKey,
    kind: 'session-claim',
    sessionId,
    owner: userId,
    claimedAt: now().toISOString(),
  };
  try {
    await container.items.create(claim);
    return userId;
  } catch (error) {
    if (cosmosStatus(error) !== 409) throw cosmosFailure('claiming the session id', error);
  }
  const held = await readItem(
    container,
    SESSION_CLAIM_DOCUMENT_ID,
    partitionKey,
    'the session id claim',
    sessionClaimDocumentSchema,
  );
  // Claims are never deleted, so a 409 is followed by a hit.
  if (held === undefined)
    throw cosmosFailure('reading the session id claim', new Error(`the claim of ${sessionId} vanished`));
  return held.resource.owner;
}
