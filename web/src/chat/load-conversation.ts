// A stored conversation as the chat opens it: its newest messages along the shown branch, oldest first.
import { ApiError, type ApiClient } from '../api/client';
import type { StoredConversation } from './messages';

/** How many messages a page of history holds. */
export const PAGE = 100;

/** The conversation's newest messages along its shown branch, oldest first. */
export async function loadConversation(api: ApiClient, sessionId: string): Promise<StoredConversation> {
  try {
    const conversation = await api.json<StoredConversation>(
      'GET',
      `/api/history/conversations/${encodeURIComponent(sessionId)}?order=desc&limit=${PAGE}`,
    );
    return { ...conversation, messages: [...conversation.messages].reverse() };
  } catch (error) {
    // History knows a conversation once its first turn has ended: until then (a reload during the first
    // answer) there is nothing stored to show, and resuming brings the running answer.
    if (error instanceof ApiError && error.status === 404) return { sessionId, messages: [] };
    throw error;
  }
}
