// POST /api/shares/{shareId}/copy ("Continue this conversation"): the snapshot's messages become a new conversation
// of the caller's, stored as long-term history is (its messages, then its header, recorded as persisted), so the
// next turn's working memory, rebuilt from history on its first read, holds them.
import { randomUUID } from 'node:crypto';
import type { SessionStore } from '../conversation/session-store.js';
import { assistantMessageId, userMessageId } from '../conversation/turn-ids.js';
import type { StoredMessage } from '../history/contracts.js';
import type { ConversationHeaders } from '../history/conversation-headers.js';
import type { ConversationMessages } from '../history/conversation-messages.js';
import { turnTokens } from '../history/digest.js';
import { preview } from '../history/header-preview.js';
import type { SharedMessage } from './contracts.js';
import type { SharingServices } from './create-share.js';
import { openShare } from './read-share.js';

export interface CopyShareServices extends Pick<SharingServices, 'shares' | 'sessions' | 'config' | 'now'> {
  /** Makes the caller's new session. */
  newSessions: Pick<SessionStore, 'create'>;
  headers: Pick<ConversationHeaders, 'touch' | 'recordPersisted' | 'setTitle'>;
  messages: Pick<ConversationMessages, 'put'>;
}

export interface CopiedShare {
  sessionId: string;
  title: string;
  messageCount: number;
}

export async function copyShare(
  services: CopyShareServices,
  userId: string,
  shareId: string,
): Promise<CopiedShare> {
  const { head, messages } = await openShare(services, shareId);
  const { sessionId } = await services.newSessions.create(userId);
  const stored = asConversation(userId, sessionId, messages);
  const first = stored[0];
  const newest = stored.at(-1);
  if (first === undefined || newest === undefined) return { sessionId, title: head.title, messageCount: 0 };
  const now = (services.now ?? (() => new Date()))().toISOString();
  await services.messages.put(stored);
  const shown = stored.findLast((message) => message.content.trim() !== '') ?? newest;
  await services.headers.touch({
    userId,
    sessionId,
    createdAt: now,
    lastActivity: now,
    messageCount: stored.length,
    preview: preview(shown.content),
    firstUserText: stored.find((message) => message.role === 'user')?.content ?? head.title,
    opensConversation: true,
  });
  await services.headers.recordPersisted(userId, sessionId, {
    upTo: stored.length,
    at: now,
    tokens: { prompt: 0, completion: 0, total: 0 },
    textTokens: turnTokens(stored),
  });
  // The title the share had; set as the user's own, so the model does not retitle the copy.
  if (head.title.trim() !== '') await services.headers.setTitle(userId, sessionId, head.title, 'user');
  return { sessionId, title: head.title, messageCount: stored.length };
}

/**
 * The shared messages as a conversation's stored messages, in order: each user message opens a turn (a new
 * chatMessageId) that the answer after it joins; an answer with no question before it is a turn of its own. Text
 * only: the share's sources and tool calls are for reading, not for the model.
 */
export function asConversation(
  userId: string,
  sessionId: string,
  messages: readonly SharedMessage[],
): StoredMessage[] {
  const stored: StoredMessage[] = [];
  let turn: { chatMessageId: string; answered: boolean } | undefined;
  for (const [ordinal, message] of messages.entries()) {
    if (message.role === 'user' || turn === undefined || turn.answered)
      turn = { chatMessageId: randomUUID(), answered: false };
    if (message.role === 'assistant') turn.answered = true;
    const messageId =
      message.role === 'user' ? userMessageId(turn.chatMessageId) : assistantMessageId(turn.chatMessageId);
    stored.push({
      id: messageId,
      kind: 'message',
      userId,
      sessionId,
      messageId,
      chatMessageId: turn.chatMessageId,
      role: message.role,
      content: message.content,
      timestamp: message.timestamp,
      ...(message.role === 'assistant' ? { finishReason: 'stop' } : {}),
      ordinal,
    });
  }
  return stored;
}
