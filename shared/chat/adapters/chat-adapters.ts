// The chat area's stores on Cosmos DB, each given the container it lives in; working memory is rebuilt on a miss
// through long-term history's ports, which the composition passes in.
import type { Database } from '@azure/cosmos';
import { HOT_CONVERSATIONS_CONTAINER, SESSIONS_CONTAINER } from '../contracts/documents.js';
import type { PostedMessageStore } from '../../conversation/posted-message-store.js';
import type { SessionStore } from '../../conversation/session-store.js';
import type { TurnCancellations } from '../cancellation/turn-cancellations.js';
import type { TurnStateStore } from '../turn-state-store.js';
import type { LongTermHistory } from '../working-memory-rebuild.js';
import type { WorkingMemoryStore } from '../../conversation/working-memory-store.js';
import { hotWindowBytes } from '../../conversation/hot-window.js';
import { createCosmosPostedMessageStore } from './cosmos-posted-message-store.js';
import { createCosmosSessionStore } from './cosmos-session-store.js';
import { createCosmosTurnCancellations } from './cosmos-turn-cancellations.js';
import { createCosmosTurnStateStore } from './cosmos-turn-state-store.js';
import { createCosmosWorkingMemoryStore } from './cosmos-working-memory-store.js';

export interface ChatStores {
  sessions: SessionStore;
  workingMemory: WorkingMemoryStore;
  turns: TurnStateStore;
  posted: PostedMessageStore;
  cancellations: TurnCancellations;
}

export function createChatStores(
  database: Database,
  options: { promptTokenBudget: number; history: LongTermHistory },
): ChatStores {
  const hot = database.container(HOT_CONVERSATIONS_CONTAINER);
  return {
    sessions: createCosmosSessionStore(database.container(SESSIONS_CONTAINER)),
    workingMemory: createCosmosWorkingMemoryStore({
      hot,
      history: options.history,
      windowBytes: hotWindowBytes(options.promptTokenBudget),
    }),
    turns: createCosmosTurnStateStore(hot),
    posted: createCosmosPostedMessageStore(database.container(SESSIONS_CONTAINER)),
    cancellations: createCosmosTurnCancellations(hot),
  };
}
