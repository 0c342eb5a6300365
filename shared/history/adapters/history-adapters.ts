// The history area's stores on Cosmos DB (conversation headers, long-term messages, session memory). A stand-in
// on this branch: the real composition comes with the Cosmos adapters of the history ports; until then the app
// cannot be built over Cosmos DB with history.
import type { Database } from '@azure/cosmos';
import type { ConversationHeaders } from '../conversation-headers.js';
import type { ConversationMessages } from '../conversation-messages.js';
import type { SessionMemory } from '../session-memory.js';

export interface HistoryStores {
  headers: ConversationHeaders;
  messages: ConversationMessages;
  sessionMemory: SessionMemory;
}

export function createHistoryStores(
  _database: Database,
  _options: { fullText: 'cosmos' | 'in-process' },
): HistoryStores {
  throw new Error('not implemented');
}
