// The port of working memory (the hot store, DESIGN §2): the recent messages of an active conversation, bounded
// by the prompt's token budget (hot-window.ts), read and extended with one point read and one point write per
// turn. Adapter: Cosmos DB (adapters/cosmos-working-memory-store.ts); a Redis adapter could take its place.
import type { ConversationMessage, SystemPrompt } from './contracts.js';

export interface WorkingMemory {
  sessionId: string;
  userId: string;
  /** Oldest first; each with its ordinal once stored. */
  messages: ConversationMessage[];
  /** Messages the conversation has had in all, in or out of the window: the next message's ordinal. */
  messageCount: number;
  /** When the conversation began; absent when nothing is stored yet. */
  createdAt?: string;
  /** The stored version this was read at (opaque); absent when nothing is stored yet. */
  version?: string;
  /**
   * The system prompt the conversation's first turn sent (personalised or basic): every later turn sends the same.
   * Kept apart from the window, so trimming never drops it. Absent before the first commit, and in conversations
   * begun before prompts were kept.
   */
  systemPrompt?: SystemPrompt;
}

export interface AppendOptions {
  /** The conversation's system prompt, stored when working memory has none yet; one already stored stays. */
  systemPrompt?: SystemPrompt;
}

export interface WorkingMemoryStore {
  /**
   * Hot store point read; on a miss rebuilds from the long-term store (and writes the hot copy); a new
   * conversation → empty messages. A document of another user → ForbiddenError.
   */
  load(userId: string, sessionId: string): Promise<WorkingMemory>;
  /**
   * Appends the messages whose messageId is not stored yet (a retried commit adds nothing twice), in order, each
   * given the next ordinal, then
   * keeps the window that fits the byte budget; every write refreshes the 24 h TTL. `base`, the memory as this
   * caller loaded it, saves a read: it is written over only if still current (else reload and retry, up to 5
   * times). Returns the messages as stored after the commit.
   */
  append(
    userId: string,
    sessionId: string,
    messages: readonly ConversationMessage[],
    base?: WorkingMemory,
    options?: AppendOptions,
  ): Promise<WorkingMemory>;
}
