// STUB on this branch only: helper A's history-adapters.ts replaces this file at merge (the Cosmos DB adapters of
// the history ports). Until then every method rejects, so the rest of the app still starts.
import type { Database } from '@azure/cosmos';
import type { ConversationHeaders } from '../conversation-headers.js';
import type { ConversationMessages } from '../conversation-messages.js';
import type { SessionMemory } from '../session-memory.js';

export interface HistoryStores {
  headers: ConversationHeaders;
  messages: ConversationMessages;
  sessionMemory: SessionMemory;
}

function notImplemented<T extends object>(): T {
  return new Proxy({} as T, {
    get: () => () => Promise.reject(new Error('createHistoryStores: not implemented')),
  });
}

export function createHistoryStores(
  _database: Database,
  _options: { fullText: 'cosmos' | 'in-process' },
): HistoryStores {
  return {
    headers: notImplemented<ConversationHeaders>(),
    messages: notImplemented<ConversationMessages>(),
    sessionMemory: notImplemented<SessionMemory>(),
  };
}
