// The Cosmos DB adapter of PostedMessageStore: one small item per accepted message in the `sessions` container,
// in its owner's partition, created with `create` so that the first post wins and a 409 means "already here".
import type { Container } from '@azure/cosmos';
import { cosmosFailure, cosmosStatus, queryItems, readItem } from '../../cosmos/adapters/cosmos-items.js';
import {
  postedMessageDocumentId,
  type PostedMessage,
  type PostedMessageStore,
} from '../../conversation/posted-message-store.js';
import { postedMessageDocumentSchema, type PostedMessageDocument } from '../contracts/documents.js';

export function createCosmosPostedMessageStore(container: Container): PostedMessageStore {
  return {
    async claim(message) {
      const id = postedMessageDocumentId(message.sessionId, message.chatMessageId);
      try {
        await container.items.create<PostedMessageDocument>({ id, kind: 'posted-message', ...message });
        return message;
      } catch (error) {
        if (cosmosStatus(error) !== 409) throw cosmosFailure('recording the posted message', error);
      }
      const stored = await readItem(
        container,
        id,
        message.userId,
        'a posted message',
        postedMessageDocumentSchema,
      );
      // Records are never deleted while their session lives, so a 409 is followed by a hit.
      if (stored === undefined)
        throw cosmosFailure('reading the posted message', new Error(`${id} vanished after a conflict`));
      return toPostedMessage(stored.resource);
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
