import { describe, expect, it } from 'vitest';
import { AppError, ValidationError } from '../../shared/errors.js';
import { parseClientFrame } from './client-messages.js';
import { payloadFromHttpBody } from './payload.js';

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
    expect(() => payloadFromHttpBody('application/json', Buffer.from('{'))).toThrow(ValidationError);
    expect(() => payloadFromHttpBody('image/png', Buffer.from('x'))).toThrow(AppError);
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
