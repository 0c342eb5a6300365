// The owner's side of shares once made: the list of their links, revoking one at once, and revoking every link of
// a conversation when it is deleted (a decorator of the conversation eraser, composed in app/app.ts).
import { NotFoundError } from '../errors.js';
import type { ConversationEraser } from '../history/conversation-eraser.js';
import type { ShareLink, ShareLinkView } from './contracts.js';
import { shareUrl, type SharingServices } from './create-share.js';
import type { ShareStore } from './share-store.js';
import { requireSharing } from './sharing-off.js';

/** The most links a list answers (the newest); an owner with more revokes old ones first. */
export const MAX_LISTED_SHARES = 500;

/** The caller's links that still work, newest first. */
export async function listShares(
  services: Pick<SharingServices, 'shares' | 'config' | 'now'>,
  userId: string,
  requestUrl: string,
): Promise<ShareLinkView[]> {
  requireSharing(services.config);
  const now = (services.now ?? (() => new Date()))().getTime();
  const links = await services.shares.links(userId, { limit: MAX_LISTED_SHARES });
  return links
    .filter((link) => !isExpired(link, now))
    .map((link) => ({
      shareId: link.shareId,
      url: shareUrl(services.config, requestUrl, link.shareId),
      sessionId: link.sessionId,
      title: link.title,
      createdAt: link.createdAt,
      expiresAt: link.expiresAt,
    }));
}

export function isExpired(share: { expiresAt: string | null }, now: number): boolean {
  return share.expiresAt !== null && new Date(share.expiresAt).getTime() <= now;
}

/**
 * Revokes one of the caller's links at once. A share of someone else is not found, exactly like an unknown one, so
 * nobody learns that a link exists by trying to revoke it.
 */
export async function revokeShare(
  services: Pick<SharingServices, 'shares' | 'config'>,
  userId: string,
  shareId: string,
): Promise<void> {
  requireSharing(services.config);
  const link = await services.shares.link(userId, shareId);
  if (link === undefined) throw new NotFoundError(`No share '${shareId}' of yours.`);
  await services.shares.revoke(userId, shareId);
}

/** Revokes every link of a conversation (whatever SHARING says: a deleted conversation is never shown). */
export async function revokeConversationShares(
  shares: ShareStore,
  userId: string,
  sessionId: string,
): Promise<number> {
  const links: ShareLink[] = await shares.links(userId, { sessionId, limit: Number.MAX_SAFE_INTEGER });
  for (const link of links) await shares.revoke(userId, link.shareId);
  return links.length;
}

/** The eraser, also revoking the deleted conversation's share links when it erases the conversation's records. */
export function revokingShares(eraser: ConversationEraser, shares: ShareStore): ConversationEraser {
  return {
    postedMessageIds: (userId, sessionId) => eraser.postedMessageIds(userId, sessionId),
    eraseTurnData: (sessionId) => eraser.eraseTurnData(sessionId),
    async erasePosted(userId, sessionId) {
      const erased = await eraser.erasePosted(userId, sessionId);
      await revokeConversationShares(shares, userId, sessionId);
      return erased;
    },
  };
}
