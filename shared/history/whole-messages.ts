// Restores what a `message-completed` event cut to stay small (tool results, sources) from working memory, which
// still holds the turn whole unless it expired.
import type { ConversationMessage } from '../conversation/messages.js';
import type { MessageCompleted } from '../conversation/message-completed.js';
import type { WorkingMemoryStore } from '../conversation/working-memory-store.js';
import type { Logger } from '../logger.js';

type TurnMessage = ConversationMessage & { ordinal: number };

/**
 * The turn's messages with their tool results and sources whole when the hot store still holds them (it expires
 * after 24 h); else the event's, cut, which is logged. (Sources come only from tool calls, so an answer whose
 * sources the event cut or left out has tool calls too: when those cannot be restored, the log says so.)
 */
export async function wholeMessages(
  services: { workingMemory: Pick<WorkingMemoryStore, 'load'> },
  event: MessageCompleted,
  log: Pick<Logger, 'warn'>,
): Promise<TurnMessage[]> {
  const memory = await services.workingMemory.load(event.userId, event.sessionId);
  // A turn the user has since branched away from is no longer in the window, but still beside it (offPath).
  const whole = new Map(
    [...memory.messages, ...(memory.offPath ?? [])].map((message) => [message.messageId, message]),
  );
  let cut = 0;
  const messages = event.messages.map((message) => {
    const found = whole.get(message.messageId);
    if (message.toolCalls !== undefined && found?.toolCalls === undefined) cut += 1;
    return {
      ...message,
      ...(message.toolCalls !== undefined && found?.toolCalls !== undefined
        ? { toolCalls: found.toolCalls }
        : {}),
      ...(found?.sources !== undefined ? { sources: found.sources } : {}),
    };
  });
  if (cut > 0)
    log.warn(
      `History: turn ${event.chatMessageId} of session ${event.sessionId} is stored with its tool results cut ` +
        '(the event was too large and working memory no longer holds them).',
    );
  return messages;
}
