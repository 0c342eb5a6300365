// The streaming event vocabulary of a chat turn (DESIGN §5), one for Web PubSub and SSE. Every event carries
// the session, the turn (chatMessageId) and a per-turn sequence number that starts at 1 and has no gaps, so
// a client can de-duplicate, detect a gap and resume. A turn's stream ends with `message-end` or `error`.
import type { LlmUsage } from '../llm/llm-gateway.js';

export const CHAT_EVENT_TYPES = [
  'message-start',
  'reasoning-delta',
  'reasoning-end',
  'content',
  'tool-call',
  'tool-result',
  'message-end',
  'error',
] as const;

export type ChatEventType = (typeof CHAT_EVENT_TYPES)[number];

export interface ChatEventBase {
  sessionId: string;
  chatMessageId: string;
  /** 1 for `message-start`, then one more per event of the turn. */
  seq: number;
}

/** An event's own fields, before the turn's ids and sequence number are stamped on it. */
export type ChatEventBody =
  | { type: 'message-start'; userMessageId: string; assistantMessageId: string }
  | { type: 'reasoning-delta'; delta: string }
  | { type: 'reasoning-end' }
  | { type: 'content'; delta: string }
  | { type: 'tool-call'; round: number; toolCallId: string; name: string; arguments: string }
  | { type: 'tool-result'; round: number; toolCallId: string; name: string; result: string; isError: boolean }
  | { type: 'message-end'; finishReason: string; usage?: LlmUsage }
  | { type: 'error'; code: string; message: string };

export type ChatEvent = ChatEventBase & ChatEventBody;

/** The last event of a turn's stream. */
export function isTerminalEvent(event: { type: ChatEventType }): boolean {
  return event.type === 'message-end' || event.type === 'error';
}
