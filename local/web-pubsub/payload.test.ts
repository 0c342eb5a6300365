import { describe, expect, it } from 'vitest';
import { InvalidRequestError, WebPubSubRestError } from './rest-errors.js';
import { parseClientFrame } from './client-messages.js';
import { billedMessageUnits, payloadFromHttpBody } from './payload.js';

describe('payloadFromHttpBody', () => {
  it('takes the data type from the Content-Type, as the service does', () => {
    expect(payloadFromHttpBody('text/plain', Buffer.from('hi'))).toEqual({ dataType: 'text', data: 'hi' });
    expect(payloadFromHttpBody('application/json; charset=utf-8', Buffer.from('"hi"'))).toEqual({
      dataType: 'json',
      data: 'hi',
    });
    expect(payloadFromHttpBody('application/octet-stream', Buffer.from([1, 2]))).toEqual({
      dataType: 'binary',
      data: Buffer.from([1, 2]),
    });
  });

  it('refuses malformed JSON and unknown media types', () => {
    expect(() => payloadFromHttpBody('application/json', Buffer.from('{'))).toThrow(InvalidRequestError);
    expect(() => payloadFromHttpBody('image/png', Buffer.from('x'))).toThrow(WebPubSubRestError);
  });
});

describe('parseClientFrame', () => {
  it('accepts the protocol frames and a sequenceAck id given as a string', () => {
    expect(parseClientFrame('{"type":"sequenceAck","sequenceId":"12"}')).toEqual({
      ok: true,
      frame: { type: 'sequenceAck', sequenceId: 12 },
    });
    expect(parseClientFrame('{"type":"joinGroup","group":"g","ackId":3}')).toMatchObject({ ok: true });
  });

  it('rejects unknown types and empty group names with a reason', () => {
    expect(parseClientFrame('{"type":"teleport"}')).toMatchObject({ ok: false });
    expect(parseClientFrame('{"type":"joinGroup","group":""}')).toMatchObject({
      ok: false,
      reason: expect.stringContaining("'group'") as string,
    });
  });
});

describe('billedMessageUnits', () => {
  it('bills each started 2 KB of a message once, and an empty message as one', () => {
    expect(billedMessageUnits({ dataType: 'text', data: '' })).toBe(1);
    expect(billedMessageUnits({ dataType: 'text', data: 'x'.repeat(2048) })).toBe(1);
    expect(billedMessageUnits({ dataType: 'text', data: 'x'.repeat(2049) })).toBe(2);
    expect(billedMessageUnits({ dataType: 'binary', data: Buffer.alloc(4097) })).toBe(3);
    expect(billedMessageUnits({ dataType: 'json', data: { text: 'x'.repeat(3000) } })).toBe(2);
  });
});
