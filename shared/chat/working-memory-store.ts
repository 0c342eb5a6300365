// The port of working memory (the hot store, DESIGN §2): the recent messages of an active conversation, read
// and extended with one point read and one point write per turn. Adapter: Cosmos DB
// (adapters/cosmos-working-memory-store.ts); a Redis adapter could take its place without touching callers.
import type { ConversationMessage } from './contracts.js';

/** The hot store keeps at most this many messages of a conversation, the newest. */
export const MAX_HOT_MESSAGES = 200;

export interface WorkingMemory {
  sessionId: string;
  userId: string;
  /** Oldest first. */
  messages: ConversationMessage[];
}

export interface WorkingMemoryStore {
  /**
   * Hot store point read; on a miss rebuilds from the long-term store (and writes the hot copy); a new
   * conversation → empty messages. A document of another user → ForbiddenError.
   */
  load(userId: string, sessionId: string): Promise<WorkingMemory>;
  /**
   * Appends the messages whose messageId is not stored yet (a retried commit adds nothing twice), in order,
   * with optimistic concurrency (If-Match etag; on 412 reload and retry, up to 5 times); keeps the newest
   * MAX_HOT_MESSAGES; every write refreshes the 24 h TTL. Returns the messages as stored after the commit.
   */
  append(userId: string, sessionId: string, messages: readonly ConversationMessage[]): Promise<WorkingMemory>;
}
