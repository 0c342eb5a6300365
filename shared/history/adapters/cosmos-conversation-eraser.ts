// The Cosmos DB adapter of ConversationEraser: a session's items in `hot-conversations` and `turn-events` are its
// whole partition there (partition key /sessionId: working memory, turn records, tool results, events and stream
// tickets), listed by id and deleted a few at a time; its posted records are `posted.{sessionId}.*` in the owner's
// partition of `sessions`. An item already gone (a retried delete, or its TTL) counts as done.
import type { Container } from '@azure/cosmos';
import { z } from 'zod';
import { mapBounded } from '../../bounded-parallel.js';
import { postedMessageDocumentId } from '../../conversation/posted-message-store.js';
import { deleteItem, deletePartitionItems, queryItems } from '../../cosmos/adapters/cosmos-items.js';
import type { ConversationEraser } from '../conversation-eraser.js';

/** Posted records deleted at once. */
const DELETE_PARALLELISM = 16;

export interface EraserContainers {
  /** `hot-conversations` (partition /sessionId). */
  hot: Container;
  /** `turn-events` (partition /sessionId). */
  turnEvents: Container;
  /** `sessions` (partition /userId). */
  sessions: Container;
}

const postedSchema = z.object({ id: z.string(), chatMessageId: z.string() });

export function createCosmosConversationEraser(containers: EraserContainers): ConversationEraser {
  const postedPrefix = (sessionId: string) => postedMessageDocumentId(sessionId, '');

  const listPosted = (userId: string, sessionId: string) =>
    queryItems(
      containers.sessions,
      {
        query:
          'SELECT c.id, c.chatMessageId, c.postedAt FROM c WHERE STARTSWITH(c.id, @prefix) ORDER BY c.postedAt',
        parameters: [{ name: '@prefix', value: postedPrefix(sessionId) }],
      },
      userId,
      "the session's posted messages",
      postedSchema,
    );

  return {
    async postedMessageIds(userId, sessionId) {
      return (await listPosted(userId, sessionId)).map((posted) => posted.chatMessageId);
    },

    async eraseTurnData(sessionId) {
      const counts = await Promise.all([
        deletePartitionItems(containers.hot, sessionId, "the session's items in the hot store"),
        deletePartitionItems(containers.turnEvents, sessionId, "the session's items in turn-events"),
      ]);
      return counts[0] + counts[1];
    },

    async erasePosted(userId, sessionId) {
      const posted = await listPosted(userId, sessionId);
      await mapBounded(posted, DELETE_PARALLELISM, ({ id }) =>
        deleteItem(containers.sessions, id, userId, 'a posted message'),
      );
      return posted.length;
    },
  };
}
