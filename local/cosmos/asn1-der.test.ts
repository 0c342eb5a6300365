import { describe, expect, it } from 'vitest';

import { objectIdentifier, octetString, smallInteger, unsignedInteger, x509Time } from './asn1-der.js';

const hex = (bytes: Buffer) => bytes.toString('hex');

describe('DER encoding', () => {
  it('encodes object identifiers with base-128 arcs', () => {
    expect(hex(objectIdentifier('1.2.840.113549'))).toBe('06062a864886f70d');
    expect(hex(objectIdentifier('2.5.29.17'))).toBe('0603551d11');
    expect(() => objectIdentifier('1.x')).toThrow(RangeError);
  });

  it('encodes integers as positive, minimal two-complement values', () => {
    expect(hex(smallInteger(2))).toBe('020102');
    expect(hex(smallInteger(0))).toBe('020100');
    expect(hex(unsignedInteger(Buffer.from([0x80])))).toBe('02020080');
    expect(hex(unsignedInteger(Buffer.from([0, 0, 0x7f])))).toBe('02017f');
  });

  it('uses the long length form from 128 bytes on', () => {
    expect(hex(octetString(Buffer.alloc(127))).slice(0, 4)).toBe('047f');
    expect(hex(octetString(Buffer.alloc(128))).slice(0, 6)).toBe('048180');
    expect(hex(octetString(Buffer.alloc(300))).slice(0, 8)).toBe('0482012c');
  });

  it('writes UTCTime before 2050 and GeneralizedTime from 2050', () => {
    expect(x509Time(new Date('2031-02-03T04:05:06Z')).toString('latin1').slice(2)).toBe('310203040506Z');
    expect(x509Time(new Date('2031-02-03T04:05:06Z'))[0]).toBe(0x17);
    const late = x509Time(new Date('2051-02-03T04:05:06Z'));
    expect(late[0]).toBe(0x18);
    expect(late.toString('latin1').slice(2)).toBe('20510203040506Z');
  });
});
