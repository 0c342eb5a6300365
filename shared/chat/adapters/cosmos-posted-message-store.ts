// The Cosmos DB adapter of PostedMessageStore (and of StreamTicketStore): one small item per accepted message in the
// `sessions` container, in its owner's partition beside the session, with its stream tickets' hashes, created in one
// transactional batch with the session's read: the first post wins, and a 409 means "already here".
import { timingSafeEqual } from 'node:crypto';
import { BulkOperationType, type Container, type JSONObject, type OperationResponse } from '@azure/cosmos';
import {
  cosmosFailure,
  deleteItem,
  parseStored,
  queryItems,
  readItem,
} from '../../cosmos/adapters/cosmos-items.js';
import { patchItem } from '../../cosmos/adapters/cosmos-patch.js';
import { UnsafeItemIdError, unsafeReason } from '../../cosmos/adapters/guarded-item.js';
import {
  postedMessageDocumentId,
  type PostedClaim,
  type PostedMessage,
  type PostedMessageStore,
  type PostedStreamTicket,
} from '../../conversation/posted-message-store.js';
import type { StreamTicketStore } from '../../streaming/stream-tickets.js';
import {
  postedMessageDocumentSchema,
  sessionDocumentSchema,
  type PostedMessageDocument,
  type SessionDocument,
} from '../contracts/documents.js';

export function createCosmosPostedMessageStore(container: Container): PostedMessageStore {
  return {
    async claim(message, ticket) {
      const { userId, sessionId } = message;
      const id = postedMessageDocumentId(sessionId, message.chatMessageId);
      for (const itemId of [sessionId, id]) {
        const reason = unsafeReason(itemId);
        if (reason !== undefined) throw new UnsafeItemIdError('item id', itemId, reason);
      }
      const document: PostedMessageDocument = {
        id,
        kind: 'posted-message',
        ...message,
        streamTickets: ticket ? [{ sha256: ticket.sha256, expiresAt: ticket.expiresAt }] : [],
      };
      // One request: the session's read and the record's create, isolated in the owner's partition. A missing
      // session (or another user's) fails the batch, so nothing is written.
      let results: OperationResponse[];
      try {
        ({ result: results = [] } = await container.items.batch(
          [
            // The batch's own partition, named on the read too (the local server reads it there).
            { operationType: BulkOperationType.Read, id: sessionId, partitionKey: userId },
            // The record is plain JSON; the SDK's type of a body has no optional fields.
            { operationType: BulkOperationType.Create, resourceBody: document as unknown as JSONObject },
          ],
          userId,
        ));
      } catch (error) {
        throw cosmosFailure('recording the posted message', error);
      }
      const [read, created] = results;
      if (read?.statusCode === 404) return { kind: 'no-session' };
      if (read?.statusCode === 200 && created?.statusCode === 201) {
        const session = parseStored(sessionDocumentSchema, read.resourceBody, 'the session');
        // The session comes back with the record: what shapes the turn (model, memory, assistant) costs no read.
        if (!isDeleting(session)) return { kind: 'recorded', posted: message, session };
        // Marked since: the delete may have purged before this record landed, so it is taken back here.
        await deleteItem(container, id, userId, 'a posted message');
        return { kind: 'session-deleted' };
      }
      if (created?.statusCode !== 409)
        throw cosmosFailure(
          'recording the posted message',
          new Error(`batch answered ${read?.statusCode ?? '-'} and ${created?.statusCode ?? '-'}`),
        );
      return repost(container, message, id, ticket);
    },

    async find(userId, sessionId, chatMessageId) {
      // In the user's own partition: another user's message with these ids is not found.
      const stored = await readItem(
        container,
        postedMessageDocumentId(sessionId, chatMessageId),
        userId,
        'a posted message',
        postedMessageDocumentSchema,
      );
      return stored === undefined ? undefined : toPostedMessage(stored.resource);
    },

    async latest(userId, sessionId, count) {
      const documents = await queryItems(
        container,
        {
          query:
            'SELECT TOP @count * FROM c WHERE STARTSWITH(c.id, @prefix) AND c.kind = @kind ORDER BY c.postedAt DESC',
          parameters: [
            { name: '@count', value: count },
            { name: '@prefix', value: postedMessageDocumentId(sessionId, '') },
            { name: '@kind', value: 'posted-message' },
          ],
        },
        userId,
        "the session's latest posted messages",
        postedMessageDocumentSchema,
      );
      return documents.map(toPostedMessage);
    },
  };
}

function toPostedMessage(document: PostedMessageDocument): PostedMessage {
  const { userId, sessionId, chatMessageId, textSha256, postedAt, fork, useMemory } = document;
  return {
    userId,
    sessionId,
    chatMessageId,
    textSha256,
    postedAt,
    ...(fork ? { fork } : {}),
    ...(useMemory === false ? { useMemory } : {}),
  };
}

/** Tickets kept per message: a re-post past them keeps only its own. */
const MAX_STREAM_TICKETS = 8;

/**
 * A re-post: the record accepted first, read beside the session, and the new ticket added to it (a rare path, three
 * requests at once). A record the conversation's delete removed meanwhile is not written again: a patch makes none.
 */
async function repost(
  container: Container,
  message: PostedMessage,
  id: string,
  ticket: PostedStreamTicket | undefined,
): Promise<PostedClaim> {
  const [session, stored] = await Promise.all([
    readItem(container, message.sessionId, message.userId, 'the session', sessionDocumentSchema),
    readItem(container, id, message.userId, 'a posted message', postedMessageDocumentSchema),
    ticket === undefined ? undefined : addTicket(container, message.userId, id, ticket),
  ]);
  if (session === undefined) return { kind: 'no-session' };
  if (isDeleting(session.resource)) return { kind: 'session-deleted' };
  // Records are never deleted while their session lives, so a 409 is followed by a hit.
  if (stored === undefined)
    throw cosmosFailure('reading the posted message', new Error(`${id} vanished after a conflict`));
  return { kind: 'recorded', posted: toPostedMessage(stored.resource), session: session.resource };
}

/** Adds a re-post's ticket, or keeps only it once the record holds MAX_STREAM_TICKETS (or none, written before). */
async function addTicket(container: Container, userId: string, id: string, ticket: PostedStreamTicket) {
  const value = { sha256: ticket.sha256, expiresAt: ticket.expiresAt };
  const added = await patchItem(
    container,
    id,
    userId,
    [{ op: 'add', path: '/streamTickets/-', value }],
    `FROM c WHERE ARRAY_LENGTH(c.streamTickets) < ${MAX_STREAM_TICKETS}`,
    'a posted message',
  );
  if (added !== 'unmet') return added;
  return patchItem(
    container,
    id,
    userId,
    [{ op: 'set', path: '/streamTickets', value: [value] }],
    undefined,
    'a posted message',
  );
}

/**
 * The stream tickets of posted messages: a ticket is found in its turn's record (one point read in its user's
 * partition), so tickets go with their conversation's posted records when it is deleted.
 */
export function createCosmosStreamTicketStore(container: Container): StreamTicketStore {
  return {
    async find(turn, ticketSha256) {
      const stored = await readItem(
        container,
        postedMessageDocumentId(turn.sessionId, turn.chatMessageId),
        turn.userId,
        'a posted message',
        postedMessageDocumentSchema,
      );
      const ticket = stored?.resource.streamTickets?.find((t) => sameHash(t.sha256, ticketSha256));
      return ticket === undefined || stored === undefined
        ? undefined
        : {
            userId: stored.resource.userId,
            sessionId: stored.resource.sessionId,
            chatMessageId: stored.resource.chatMessageId,
            expiresAt: ticket.expiresAt,
          };
    },
  };
}

/** Hashes compared in constant time: how much of a stored hash a guess matches takes no longer to learn. */
function sameHash(stored: string, presented: string): boolean {
  const a = Buffer.from(stored, 'utf8');
  const b = Buffer.from(presented, 'utf8');
  return a.length === b.length && timingSafeEqual(a, b);
}

function isDeleting(session: SessionDocument): boolean {
  return session.deletingAt !== undefined || session.deletedAt !== undefined;
}
