// The port of shares: each snapshot under its random id, and each owner's list of links. Adapter:
// adapters/cosmos-share-store.ts. Every method takes ids the edge has checked (shareId: ids.ts).
import type { ShareHead, ShareLink, SharedMessage, ShareSnapshot } from './contracts.js';

export interface ShareStore {
  /**
   * Stores a snapshot: the owner's link first (so revoking the conversation finds it), then the chunks, then the
   * head, which makes the share readable. Items of a share with an expiry expire with it.
   */
  create(snapshot: ShareSnapshot): Promise<void>;
  /** The share's head; undefined when there is none (never made, revoked, or removed by its expiry). */
  head(shareId: string): Promise<ShareHead | undefined>;
  /** The share's messages in order (its chunks read in one single-partition query). */
  messages(head: ShareHead): Promise<SharedMessage[]>;
  /** The owner's link to a share; undefined for a share of someone else, as for none. */
  link(userId: string, shareId: string): Promise<ShareLink | undefined>;
  /** The owner's links, newest first (at most `limit`), optionally of one conversation only. */
  links(userId: string, options: { sessionId?: string; limit: number }): Promise<ShareLink[]>;
  /**
   * Revokes at once: the head goes first (the share is unreadable from then on), then its chunks, then the owner's
   * link. Harmless when part or all of it is gone already.
   */
  revoke(userId: string, shareId: string): Promise<void>;
}
