// A minimal ASN.1 DER encoder: just the types an X.509 certificate needs. Pure functions over bytes, so the
// self-signed certificate can be built without a native tool or an extra npm package.

const TAG = {
  boolean: 0x01,
  integer: 0x02,
  bitString: 0x03,
  octetString: 0x04,
  objectIdentifier: 0x06,
  utf8String: 0x0c,
  utcTime: 0x17,
  generalizedTime: 0x18,
  sequence: 0x30,
  set: 0x31,
} as const;

function encodeLength(length: number): Buffer {
  if (length < 0x80) return Buffer.from([length]);
  const bytes: number[] = [];
  for (let rest = length; rest > 0; rest = Math.floor(rest / 256)) bytes.unshift(rest % 256);
  return Buffer.from([0x80 | bytes.length, ...bytes]);
}

/** One tag-length-value element. */
export function tlv(tag: number, content: Uint8Array): Buffer {
  return Buffer.concat([Buffer.from([tag]), encodeLength(content.length), content]);
}

export function sequence(...elements: Uint8Array[]): Buffer {
  return tlv(TAG.sequence, Buffer.concat(elements));
}

export function set(...elements: Uint8Array[]): Buffer {
  return tlv(TAG.set, Buffer.concat(elements));
}

export function boolean(value: boolean): Buffer {
  return tlv(TAG.boolean, Buffer.from([value ? 0xff : 0x00]));
}

/** A non-negative integer given as big-endian bytes (a leading zero is added when the top bit is set). */
export function unsignedInteger(bytes: Uint8Array): Buffer {
  let start = 0;
  while (start < bytes.length - 1 && bytes[start] === 0) start += 1;
  const trimmed = Buffer.from(bytes.subarray(start));
  const needsPad = trimmed.length === 0 || (trimmed[0] ?? 0) >= 0x80;
  return tlv(TAG.integer, needsPad ? Buffer.concat([Buffer.from([0]), trimmed]) : trimmed);
}

export function smallInteger(value: number): Buffer {
  if (!Number.isInteger(value) || value < 0 || value > 0x7fffffff) {
    throw new RangeError(`smallInteger: ${value} is not a non-negative 31-bit integer`);
  }
  const bytes: number[] = [];
  for (let rest = value; rest > 0; rest = Math.floor(rest / 256)) bytes.unshift(rest % 256);
  return unsignedInteger(Buffer.from(bytes.length > 0 ? bytes : [0]));
}

/** A BIT STRING whose content is whole bytes (no unused bits). */
export function bitString(bytes: Uint8Array): Buffer {
  return tlv(TAG.bitString, Buffer.concat([Buffer.from([0]), bytes]));
}

export function octetString(bytes: Uint8Array): Buffer {
  return tlv(TAG.octetString, bytes);
}

export function utf8String(text: string): Buffer {
  return tlv(TAG.utf8String, Buffer.from(text, 'utf8'));
}

/** An OBJECT IDENTIFIER in dotted form, e.g. `2.5.29.17`. */
export function objectIdentifier(dotted: string): Buffer {
  const arcs = dotted.split('.').map((arc) => {
    if (!/^\d+$/.test(arc)) throw new RangeError(`objectIdentifier: bad arc in "${dotted}"`);
    return Number(arc);
  });
  const [first, second, ...rest] = arcs;
  if (first === undefined || second === undefined || first > 2 || (first < 2 && second > 39)) {
    throw new RangeError(`objectIdentifier: "${dotted}" is not a valid OID`);
  }
  const bytes: number[] = [];
  for (const arc of [first * 40 + second, ...rest]) {
    const groups: number[] = [arc % 128];
    for (let high = Math.floor(arc / 128); high > 0; high = Math.floor(high / 128)) {
      groups.unshift(0x80 | (high % 128));
    }
    bytes.push(...groups);
  }
  return tlv(TAG.objectIdentifier, Buffer.from(bytes));
}

/** X.509 times: UTCTime up to 2049, GeneralizedTime from 2050 (RFC 5280 §4.1.2.5). */
export function x509Time(date: Date): Buffer {
  const iso = date.toISOString(); // YYYY-MM-DDTHH:MM:SS.sssZ
  const compact = `${iso.slice(0, 4)}${iso.slice(5, 7)}${iso.slice(8, 10)}${iso.slice(11, 13)}${iso.slice(14, 16)}${iso.slice(17, 19)}Z`;
  const year = date.getUTCFullYear();
  if (year >= 1950 && year < 2050) return tlv(TAG.utcTime, Buffer.from(compact.slice(2), 'ascii'));
  return tlv(TAG.generalizedTime, Buffer.from(compact, 'ascii'));
}

/** A context-specific constructed tag ([n] EXPLICIT), e.g. the certificate's version and extensions. */
export function explicit(tagNumber: number, content: Uint8Array): Buffer {
  return tlv(0xa0 | tagNumber, content);
}

/** A context-specific primitive tag ([n] IMPLICIT), e.g. a subjectAltName's dNSName or iPAddress. */
export function implicitPrimitive(tagNumber: number, content: Uint8Array): Buffer {
  return tlv(0x80 | tagNumber, content);
}
