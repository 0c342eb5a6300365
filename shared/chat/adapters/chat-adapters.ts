// The chat area's stores: sessions and posted messages on Cosmos DB, and working memory, turn records and stop
// records over the hot store the composition chose; working memory is rebuilt on a miss through long-term
// history's ports, which the composition passes in.
import type { Database } from '@azure/cosmos';
import type { HotStore } from '../../conversation/hot-store.js';
import { SESSIONS_CONTAINER } from '../contracts/documents.js';
import { hotWindowBytes } from '../../conversation/hot-window.js';
import { createHotTurnCancellations } from '../hot-turn-cancellations.js';
import { createHotTurnState } from '../hot-turn-state.js';
import { createHotWorkingMemory, markWorkingMemory } from '../hot-working-memory.js';
import type { PostedMessageStore } from '../../conversation/posted-message-store.js';
import type { SessionStore } from '../../conversation/session-store.js';
import type { TurnCancellations } from '../cancellation/turn-cancellations.js';
import type { TurnStateStore } from '../turn-state-store.js';
import type { LongTermHistory } from '../working-memory-rebuild.js';
import type { WorkingMemoryStore } from '../../conversation/working-memory-store.js';
import { createCosmosPostedMessageStore } from './cosmos-posted-message-store.js';
import { createCosmosSessionStore } from './cosmos-session-store.js';

export interface ChatStores {
  sessions: SessionStore;
  workingMemory: WorkingMemoryStore;
  turns: TurnStateStore;
  posted: PostedMessageStore;
  cancellations: TurnCancellations;
}

export function createChatStores(
  database: Database,
  options: {
    hot: HotStore;
    /** How many bytes of messages working memory rewrites before they go to a base (the hot store's choice). */
    tailBytes?: number;
    chat: { promptTokenBudget: number; temporaryChatTtlSeconds: number };
    history: LongTermHistory;
  },
): ChatStores {
  const { hot } = options;
  return {
    sessions: markingDeletes(
      createCosmosSessionStore(
        database.container(SESSIONS_CONTAINER),
        undefined,
        options.chat.temporaryChatTtlSeconds,
      ),
      hot,
    ),
    workingMemory: createHotWorkingMemory({
      hot,
      history: options.history,
      windowBytes: hotWindowBytes(options.chat.promptTokenBudget),
      ...(options.tailBytes === undefined ? {} : { tailBytes: options.tailBytes }),
    }),
    turns: createHotTurnState(hot),
    posted: createCosmosPostedMessageStore(database.container(SESSIONS_CONTAINER)),
    cancellations: createHotTurnCancellations(hot),
  };
}

/**
 * The session store, whose tombstone (the start of a delete) is also marked in the conversation's working memory once
 * it stands, where a model round reads it with that document instead of apart.
 */
function markingDeletes(sessions: SessionStore, hot: HotStore): SessionStore {
  return {
    ...sessions,
    async markDeleting(userId, sessionId) {
      const marked = await sessions.markDeleting(userId, sessionId);
      if (marked)
        await markWorkingMemory(hot, { userId, sessionId }, { deletingAt: new Date().toISOString() });
      return marked;
    },
  };
}
