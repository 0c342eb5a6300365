// The ids of a turn's parts, derived from the session and the client's chatMessageId, so every write of a turn is
// idempotent: the chatTurn orchestration's instance and the stored messages' ids.

/** The chatTurn orchestration of a message: one instance per (session, message), so a duplicate is a no-op. */
export function turnInstanceId(sessionId: string, chatMessageId: string): string {
  return `chat-${sessionId}-${chatMessageId}`;
}

/** A stored message's id is `{chatMessageId}_{role}`: every write of a turn is idempotent. */
export function userMessageId(chatMessageId: string): string {
  return `${chatMessageId}_user`;
}

export function assistantMessageId(chatMessageId: string): string {
  return `${chatMessageId}_assistant`;
}
