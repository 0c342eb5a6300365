// The stored shape of a conversation's messages, shared by the hot store, the long-term history and prompt
// building. A message's id is `{chatMessageId}_{role}` (seed 000), which makes every write of a turn idempotent.

/** One tool call of a turn, with the result the model was given. */
export interface StoredToolCall {
  id: string;
  name: string;
  /** The JSON text of the arguments exactly as the model produced it. */
  arguments: string;
  result: string;
  isError: boolean;
  /** The round of the turn the call belongs to (0 = the first, as in the tool-call and tool-result events). */
  round: number;
}

export interface ConversationMessage {
  /** `${chatMessageId}_user` | `${chatMessageId}_assistant`. */
  messageId: string;
  chatMessageId: string;
  role: 'user' | 'assistant';
  content: string;
  /** ISO 8601. */
  timestamp: string;
  /** Assistant only: the tool calls of the turn and their results. */
  toolCalls?: StoredToolCall[];
  /** Assistant only. */
  finishReason?: string;
  /** User only: the turn failed; the user's message is kept. */
  failure?: { code: string; message: string };
}

export function userMessageId(chatMessageId: string): string {
  return `${chatMessageId}_user`;
}

export function assistantMessageId(chatMessageId: string): string {
  return `${chatMessageId}_assistant`;
}
