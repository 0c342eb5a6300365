// The port of posted messages: one record per message the front door accepted, keyed by session and
// chatMessageId, so a re-post is recognised (same text: the same message again) or refused (different text).
// Adapter: Cosmos DB (adapters/cosmos-posted-message-store.ts), in the `sessions` container beside the session.
import type { PostedMessage } from './contracts.js';

export interface PostedMessageStore {
  /**
   * Records the message as accepted unless its session already has one with that chatMessageId; either way,
   * what is recorded now: the given message, or the one accepted first (its text hash and postedAt).
   */
  claim(message: PostedMessage): Promise<PostedMessage>;
  /** The accepted message with that chatMessageId in the user's session; undefined when none was accepted. */
  find(userId: string, sessionId: string, chatMessageId: string): Promise<PostedMessage | undefined>;
}
