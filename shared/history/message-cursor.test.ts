// The message page cursor: opaque to clients, and refused when this API did not make it.
import { describe, expect, it } from 'vitest';
import { decodeMessageCursor, encodeMessageCursor } from './message-cursor.js';

describe('message cursor', () => {
  it('round-trips, and refuses anything it did not make', () => {
    const token = encodeMessageCursor({ ordinal: 41, order: 'desc' });
    expect(token).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(decodeMessageCursor(token)).toEqual({ ordinal: 41, order: 'desc' });
    const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
    for (const bad of [
      'not a token!',
      '',
      b64({ v: 2, o: 1, d: 'asc' }),
      b64({ v: 1, o: -1, d: 'asc' }),
      b64({ v: 1, o: 1.5, d: 'asc' }),
      b64({ v: 1, o: 1, d: 'sideways' }),
      b64([1, 2]),
      Buffer.from('{"v":1,').toString('base64url'),
    ])
      expect(decodeMessageCursor(bad), bad).toBeUndefined();
  });
});
