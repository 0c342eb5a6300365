// GET /api/shares/{shareId}: what anyone with the link reads, signed in or not. An unknown, revoked or expired
// share, or one of a conversation being deleted, is the same 404, so the answer tells nothing about which.
import { NotFoundError } from '../errors.js';
import type { ShareHead, SharedConversation, SharedMessage } from './contracts.js';
import type { SharingServices } from './create-share.js';
import { isExpired } from './share-links.js';
import { requireSharing } from './sharing-off.js';

export function shareNotFound(shareId: string): NotFoundError {
  return new NotFoundError(`No share '${shareId}': the link is wrong, or was revoked or has expired.`);
}

/** The share's head and messages when it can be shown; else the one NotFoundError. */
export async function openShare(
  services: Pick<SharingServices, 'shares' | 'sessions' | 'config' | 'now'>,
  shareId: string,
): Promise<{ head: ShareHead; messages: SharedMessage[] }> {
  requireSharing(services.config);
  const head = await services.shares.head(shareId);
  const now = (services.now ?? (() => new Date()))().getTime();
  if (head === undefined || isExpired(head, now)) throw shareNotFound(shareId);
  // Beside the chunks: a conversation whose delete has begun is not shown, even before its links are revoked.
  const [deleted, messages] = await Promise.all([
    services.sessions.isDeleted(head.userId, head.sessionId),
    services.shares.messages(head),
  ]);
  if (deleted) throw shareNotFound(shareId);
  return { head, messages };
}

export async function readShare(
  services: Pick<SharingServices, 'shares' | 'sessions' | 'config' | 'now'>,
  shareId: string,
): Promise<SharedConversation> {
  const { head, messages } = await openShare(services, shareId);
  return {
    shareId: head.shareId,
    title: head.title,
    createdAt: head.createdAt,
    expiresAt: head.expiresAt,
    includesToolCalls: head.includesToolCalls,
    messages,
  };
}
