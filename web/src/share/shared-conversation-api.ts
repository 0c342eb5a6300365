// What the shared page reads and does over HTTP: the snapshot (no identity sent: anyone with the link reads it),
// "Continue this conversation" and making a link (as the signed-in user).
import type { ApiClient } from '../api/client';
import { toApiError } from '../api/client';

export interface SharedSource {
  title: string;
  citation: string;
  heading?: string;
}

export interface SharedToolCall {
  name: string;
  arguments: string;
  result: string;
  isError: boolean;
}

export interface SharedMessage {
  role: 'user' | 'assistant';
  content: string;
  timestamp: string;
  sources?: SharedSource[];
  toolCalls?: SharedToolCall[];
}

export interface SharedConversationBody {
  shareId: string;
  title: string;
  createdAt: string;
  expiresAt: string | null;
  includesToolCalls: boolean;
  messages: SharedMessage[];
}

export interface CreatedShare {
  shareId: string;
  url: string;
  messageCount: number;
  expiresAt: string | null;
}

/** The share id of a shared conversation's address (`/s/{shareId}`, 22 base64url characters), else undefined. */
export function sharedConversationId(pathname: string): string | undefined {
  return /^\/s\/([A-Za-z0-9_-]{21}[AQgw])\/?$/.exec(pathname)?.[1];
}

/** The snapshot, read without any identity. */
export async function readSharedConversation(base: string, shareId: string): Promise<SharedConversationBody> {
  const response = await fetch(`${base}/api/shares/${encodeURIComponent(shareId)}`, {
    headers: { accept: 'application/json' },
    credentials: 'omit',
  });
  if (!response.ok) throw await toApiError(response);
  return (await response.json()) as SharedConversationBody;
}

/** The caller's new conversation holding the shared messages. */
export function continueSharedConversation(api: ApiClient, shareId: string): Promise<{ sessionId: string }> {
  return api.json<{ sessionId: string }>('POST', `/api/shares/${encodeURIComponent(shareId)}/copy`);
}

/** A link to the conversation as it is shown now. */
export function shareConversation(api: ApiClient, sessionId: string): Promise<CreatedShare> {
  return api.json<CreatedShare>(
    'POST',
    `/api/history/conversations/${encodeURIComponent(sessionId)}/shares`,
    {},
  );
}
