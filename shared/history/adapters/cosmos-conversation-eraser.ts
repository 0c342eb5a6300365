// The Cosmos DB adapter of ConversationEraser: a session's hot store entries (whichever store holds them), its whole
// partition of `turn-events` (events and stream tickets, deleted a few at a time), and its posted records,
// `posted.{sessionId}.*` in the owner's partition of `sessions`. An item already gone counts as done.
import type { Container } from '@azure/cosmos';
import { z } from 'zod';
import { mapBounded } from '../../bounded-parallel.js';
import { postedMessageDocumentId } from '../../conversation/posted-message-store.js';
import type { HotStore } from '../../conversation/hot-store.js';
import { deleteItem, deletePartitionItems, queryItems } from '../../cosmos/adapters/cosmos-items.js';
import type { ConversationEraser } from '../conversation-eraser.js';

/** Posted records deleted at once. */
const DELETE_PARALLELISM = 16;

export interface EraserContainers {
  /** The hot store (working memory, turn records, tool results, stop records). */
  hot: HotStore;
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
        containers.hot.deleteSession(sessionId),
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
