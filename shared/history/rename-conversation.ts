// Renames a conversation: a title the user set is never replaced by the model's.
import type { ConversationSummary } from './contracts.js';
import type { ConversationHeaders } from './conversation-headers.js';
import { notFound, requireHeader, toSummary } from './conversation-reads.js';

export async function renameConversation(
  headers: ConversationHeaders,
  userId: string,
  sessionId: string,
  title: string,
): Promise<ConversationSummary> {
  if ((await headers.setTitle(userId, sessionId, title, 'user')) === 'missing') throw notFound(sessionId);
  return toSummary(await requireHeader(headers, userId, sessionId));
}
