// The bound of working memory: the newest whole turns of a conversation that fit in a byte budget
// derived from the prompt's token budget, so the hot document, and the cost of reading and writing it each turn,
// stop growing once a conversation is longer than a prompt can hold. Pure.
import type { ConversationMessage } from './messages.js';

/**
 * Stored bytes of working memory per prompt token. The prompt estimate counts 3 UTF-8 bytes a token; the rest
 * is room for the stored fields (ids, timestamps, tool calls) around the text.
 */
const BYTES_PER_PROMPT_TOKEN = 4;

export function hotWindowBytes(promptTokenBudget: number): number {
  return promptTokenBudget * BYTES_PER_PROMPT_TOKEN;
}

/**
 * The newest whole turns (the messages sharing a chatMessageId) whose stored size fits maxBytes, oldest first.
 * The newest turn is always kept, whatever its size.
 */
export function fitHotWindow(
  messages: readonly ConversationMessage[],
  maxBytes: number,
): ConversationMessage[] {
  let bytes = 0;
  let start = messages.length;
  while (start > 0) {
    const chatMessageId = messages[start - 1]!.chatMessageId;
    let turnStart = start - 1;
    while (turnStart > 0 && messages[turnStart - 1]!.chatMessageId === chatMessageId) turnStart -= 1;
    const turnBytes = storedBytes(messages.slice(turnStart, start));
    if (start < messages.length && bytes + turnBytes > maxBytes) break;
    bytes += turnBytes;
    start = turnStart;
  }
  return messages.slice(start);
}

/** The bytes messages take as stored (their JSON, UTF-8). */
export function storedBytes(messages: readonly ConversationMessage[]): number {
  return messages.reduce((sum, message) => sum + Buffer.byteLength(JSON.stringify(message), 'utf8'), 0);
}
