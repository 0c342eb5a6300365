// The history area's stores on Cosmos DB, each given the container it lives in. `fullText` says where search is
// answered: Cosmos DB's full-text functions (Azure) or in process (the local server, which lacks them).
import type { Database } from '@azure/cosmos';
import { CONVERSATION_MESSAGES_CONTAINER, CONVERSATIONS_CONTAINER } from '../contracts.js';
import type { ConversationHeaders } from '../conversation-headers.js';
import type { ConversationMessages } from '../conversation-messages.js';
import type { FullTextMode } from '../../search/full-text.js';
import type { SessionMemory } from '../session-memory.js';
import { createCosmosConversationHeaders } from './cosmos-conversation-headers.js';
import { createCosmosConversationMessages } from './cosmos-conversation-messages.js';
import { createCosmosSessionMemory } from './cosmos-session-memory.js';

export interface HistoryStores {
  headers: ConversationHeaders;
  messages: ConversationMessages;
  sessionMemory: SessionMemory;
}

export function createHistoryStores(
  database: Database,
  options: { fullText: FullTextMode; cachedSessions?: number },
): HistoryStores {
  const messages = database.container(CONVERSATION_MESSAGES_CONTAINER);
  return {
    headers: createCosmosConversationHeaders(database.container(CONVERSATIONS_CONTAINER), options),
    messages: createCosmosConversationMessages(messages, options),
    sessionMemory: createCosmosSessionMemory(
      messages,
      options.cachedSessions === undefined ? {} : { cachedSessions: options.cachedSessions },
    ),
  };
}
