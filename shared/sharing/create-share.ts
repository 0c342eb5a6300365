// POST /api/history/conversations/{sessionId}/shares: the owner's snapshot of the conversation's shown branch, up
// to a message, read a page at a time through the History API's own read, bounded in size, stored under a new
// 128-bit random id.
import { randomBytes } from 'node:crypto';
import type { SessionStore } from '../conversation/session-store.js';
import { NotFoundError, ValidationError } from '../errors.js';
import { MAX_MESSAGE_PAGE } from '../history/contracts.js';
import type { HistoryReadServices } from '../history/conversation-reads.js';
import { getConversation } from '../history/get-conversation.js';
import { getConversationQuerySchema } from '../history/history-queries.js';
import {
  SHARE_MAX_BYTES,
  SHARE_MAX_LIFETIME_DAYS,
  type CreateShareBody,
  type SharedMessage,
} from './contracts.js';
import type { SharingConfig } from './settings.js';
import type { ShareStore } from './share-store.js';
import { requireSharing } from './sharing-off.js';
import { chunkMessages, sharedMessageBytes, ShareTooLargeError, toSharedMessage } from './snapshot.js';

export interface SharingServices {
  shares: ShareStore;
  /** The conversation as its owner reads it (active branch, read-your-writes). */
  history: HistoryReadServices;
  /** Whether a conversation is being deleted (its tombstone): its shares are not shown, nor made. */
  sessions: Pick<SessionStore, 'isDeleted'>;
  config: SharingConfig;
  now?: () => Date;
}

/** 128 random bits, base64url: 22 characters (ids.ts `shareId`). */
export function newShareId(): string {
  return randomBytes(16).toString('base64url');
}

/** The page that shows a share: SHARE_PAGE_URL's, or the origin the request came to. */
export function shareUrl(config: SharingConfig, requestUrl: string, shareId: string): string {
  const base = config.pageUrl ?? new URL(requestUrl).origin;
  return `${base}/s/${shareId}`;
}

export interface CreatedShare {
  shareId: string;
  url: string;
  messageCount: number;
  expiresAt: string | null;
}

export async function createShare(
  services: SharingServices,
  userId: string,
  sessionId: string,
  body: CreateShareBody,
  requestUrl: string,
): Promise<CreatedShare> {
  requireSharing(services.config);
  const now = (services.now ?? (() => new Date()))();
  const expiresAt = checkedExpiry(body.expiresAt, now);
  const { title, messages } = await readShownBranch(services.history, userId, sessionId, body);
  const chunks = chunkMessages(messages);
  const shareId = newShareId();
  await services.shares.create({
    fields: {
      shareId,
      userId,
      sessionId,
      title,
      createdAt: now.toISOString(),
      expiresAt,
      messageCount: messages.length,
      includesToolCalls: body.includeToolCalls,
    },
    chunks,
  });
  // A delete that began while the snapshot was taken may have missed this link: take it back.
  if (await services.sessions.isDeleted(userId, sessionId)) {
    await services.shares.revoke(userId, shareId);
    throw new NotFoundError(`No conversation '${sessionId}' for this user.`);
  }
  return {
    shareId,
    url: shareUrl(services.config, requestUrl, shareId),
    messageCount: messages.length,
    expiresAt,
  };
}

function checkedExpiry(expiresAt: string | undefined, now: Date): string | null {
  if (expiresAt === undefined) return null;
  const at = new Date(expiresAt);
  const latest = now.getTime() + SHARE_MAX_LIFETIME_DAYS * 86_400_000;
  if (at.getTime() <= now.getTime() || at.getTime() > latest)
    throw new ValidationError(
      `Invalid share: expiresAt must be in the future, and at most ${SHARE_MAX_LIFETIME_DAYS} days ahead.`,
      [{ path: 'expiresAt', message: 'must be in the future, and at most 10 years ahead' }],
    );
  return at.toISOString();
}

/**
 * The shown branch's messages up to `upToMessageId` (the end when absent), as a share shows them. Reading stops at
 * that message, or as soon as the snapshot passes SHARE_MAX_BYTES (413), so its cost is bounded by the share.
 */
async function readShownBranch(
  history: HistoryReadServices,
  userId: string,
  sessionId: string,
  body: CreateShareBody,
): Promise<{ title: string; messages: SharedMessage[] }> {
  const messages: SharedMessage[] = [];
  let bytes = 0;
  let title: string | undefined;
  let continuationToken: string | undefined;
  for (;;) {
    const query = getConversationQuerySchema.parse({
      limit: String(MAX_MESSAGE_PAGE),
      order: 'asc',
      ...(continuationToken === undefined ? {} : { continuationToken }),
    });
    const page = await getConversation(history, userId, sessionId, query);
    title = page.title;
    for (const message of page.messages) {
      const shared = toSharedMessage(message, body.includeToolCalls);
      bytes += sharedMessageBytes(shared);
      if (bytes > SHARE_MAX_BYTES) throw new ShareTooLargeError(bytes);
      messages.push(shared);
      if (message.messageId === body.upToMessageId) return { title, messages };
    }
    continuationToken = page.continuationToken;
    if (continuationToken === undefined) break;
  }
  if (body.upToMessageId !== undefined)
    throw new ValidationError(
      `Invalid share: upToMessageId '${body.upToMessageId}' is not a message of the conversation's shown branch.`,
      [{ path: 'upToMessageId', message: "is not a message of the conversation's shown branch" }],
    );
  return { title: title ?? '', messages };
}
