// The question a turn is answering, kept in the tab's session storage while it is answered: history stores a new
// conversation once its first answer ends, so a reload before then would show the answer with no question above.
import type { ChatUIMessage } from './messages';

const key = (sessionId: string): string => `memory-chat.pending.${sessionId}`;

export function rememberPending(sessionId: string, message: ChatUIMessage): void {
  try {
    window.sessionStorage.setItem(key(sessionId), JSON.stringify(message));
  } catch {
    // Storage full or refused: a reload then shows the answer alone, as before.
  }
}

export function forgetPending(sessionId: string): void {
  window.sessionStorage.removeItem(key(sessionId));
}

export function pendingQuestion(sessionId: string): ChatUIMessage | undefined {
  const text = window.sessionStorage.getItem(key(sessionId));
  if (text === null) return undefined;
  try {
    const message = JSON.parse(text) as ChatUIMessage;
    return message.role === 'user' && Array.isArray(message.parts) ? message : undefined;
  } catch {
    return undefined;
  }
}
