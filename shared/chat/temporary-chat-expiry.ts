// A temporary chat's end: a job started with the chat (temporary-chat-orchestration.ts) waits until TEMPORARY_CHAT_TTL
// has passed, then deletes the chat everywhere as a delete of the conversation does (turns, events, attachments).
import type { ChatSession } from '../conversation/session-store.js';
import type { OrchestrationClient } from '../durable/orchestration-client.js';
import { NotFoundError } from '../errors.js';
import { deleteConversation, type DeleteConversationServices } from '../history/delete-conversation.js';
import {
  TEMPORARY_CHAT_EXPIRY_ORCHESTRATION,
  temporaryChatInstanceId,
  type TemporaryChatExpiryInput,
} from './contracts/activities.js';

/** Starts the chat's expiry job (nothing for a chat that is not temporary). */
export async function scheduleTemporaryChatExpiry(
  orchestrations: OrchestrationClient,
  session: ChatSession,
  ttlSeconds: number,
): Promise<void> {
  if (session.temporary !== true) return;
  const input: TemporaryChatExpiryInput = {
    userId: session.userId,
    sessionId: session.sessionId,
    expiresAt: new Date(Date.parse(session.createdAt) + ttlSeconds * 1000).toISOString(),
  };
  await orchestrations.startNew(TEMPORARY_CHAT_EXPIRY_ORCHESTRATION, {
    instanceId: temporaryChatInstanceId(session.sessionId),
    input,
  });
}

/** Deletes the chat; 'gone' when its owner deleted it (or erased their data) before its time was up. */
export async function expireTemporaryChat(
  services: DeleteConversationServices,
  input: TemporaryChatExpiryInput,
): Promise<'deleted' | 'gone'> {
  try {
    await deleteConversation(services, input.userId, input.sessionId);
    return 'deleted';
  } catch (error) {
    if (error instanceof NotFoundError) return 'gone';
    throw error;
  }
}
