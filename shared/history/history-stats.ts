// A user's totals over their conversations: conversations, messages and tokens used.
import type { HistoryStats } from './contracts.js';
import type { ConversationHeaders } from './conversation-headers.js';

export async function historyStats(headers: ConversationHeaders, userId: string): Promise<HistoryStats> {
  return { userId, ...(await headers.totals(userId)) };
}
