// The ids a request's turn gets: random ones, or, with an Idempotency-Key, ids derived from the caller and the key,
// so the same key names the same session and message (the same turn, its answer replayed from its event log).
import { createHash, randomUUID } from 'node:crypto';

const ALPHANUMERIC = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

function digest(parts: readonly string[]): Buffer {
  return createHash('sha256').update(parts.join('\n'), 'utf8').digest();
}

/** A 16-character client-chosen session id (the form a useChat chat id has), from the caller and the key. */
export function keyedSessionId(userId: string, key: string): string {
  const bytes = digest(['openai-session', userId, key]);
  return [...bytes.subarray(0, 16)].map((byte) => ALPHANUMERIC[byte % ALPHANUMERIC.length]).join('');
}

/** A message id (an RFC 9562 version 8 UUID) from the session and the key; random without a key. */
export function turnMessageId(sessionId: string, key: string | undefined): string {
  if (key === undefined) return randomUUID();
  const hex = digest(['openai-message', sessionId, key]).toString('hex');
  const variant = ((Number.parseInt(hex.slice(16, 17), 16) & 0x3) | 0x8).toString(16);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-8${hex.slice(13, 16)}-${variant}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}
