// TEMPORARY STUB (helper B's branch): helper A's real Cosmos DB adapters of the history ports replace this file at
// merge. Same signature; every port method rejects with 'not implemented', so the app still starts.
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
  return { headers: notImplemented(), messages: notImplemented(), sessionMemory: notImplemented() };
}

function notImplemented<T extends object>(): T {
  return new Proxy({} as T, {
    get: (_target, name) => () => Promise.reject(new Error(`not implemented: ${String(name)}`)),
  });
}
