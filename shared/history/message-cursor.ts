// The History API's message cursor: where a page of messages ends, handed to clients as an opaque token
// (base64url JSON) and taken back only when this module made it.
import { z } from 'zod';

/** Where a page of messages ends, for the next one: opaque to clients (base64url JSON). */
export interface MessageCursor {
  /** The ordinal of the page's last message. */
  ordinal: number;
  order: 'asc' | 'desc';
}

const cursorSchema = z.object({
  v: z.literal(1),
  o: z.number().int().nonnegative(),
  d: z.enum(['asc', 'desc']),
});

export function encodeMessageCursor(cursor: MessageCursor): string {
  return Buffer.from(JSON.stringify({ v: 1, o: cursor.ordinal, d: cursor.order }), 'utf8').toString(
    'base64url',
  );
}

/** undefined when `token` is not one encodeMessageCursor made. */
export function decodeMessageCursor(token: string): MessageCursor | undefined {
  if (!/^[A-Za-z0-9_-]{1,200}$/.test(token)) return undefined;
  let json: unknown;
  try {
    json = JSON.parse(Buffer.from(token, 'base64url').toString('utf8'));
  } catch {
    return undefined;
  }
  const parsed = cursorSchema.safeParse(json);
  return parsed.success ? { ordinal: parsed.data.o, order: parsed.data.d } : undefined;
}
