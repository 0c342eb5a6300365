// Makes a fresh self-signed TLS certificate (ECDSA P-256) for the local Cosmos DB server at start-up, valid for
// loopback names. The bundled one of @vercel/cosmosdb-server has no subjectAltName and expired in 2021.
import { createHash, generateKeyPairSync, randomBytes, sign } from 'node:crypto';
import { isIP } from 'node:net';

import {
  bitString,
  boolean,
  explicit,
  implicitPrimitive,
  objectIdentifier,
  octetString,
  sequence,
  set,
  smallInteger,
  unsignedInteger,
  utf8String,
  x509Time,
} from './asn1-der.js';

export interface SelfSignedCertificate {
  /** PEM certificate: the server presents it and clients trust it as their only CA. */
  certPem: string;
  /** PEM PKCS#8 private key, held in memory only. */
  keyPem: string;
}

export interface SelfSignedCertificateOptions {
  /** Host names and IP addresses the certificate is valid for. */
  subjectAltNames: readonly string[];
  commonName?: string;
  /** Validity starts an hour before `now` to tolerate clock skew. */
  now?: Date;
  validityDays?: number;
}

const OID = {
  commonName: '2.5.4.3',
  ecdsaWithSha256: '1.2.840.10045.4.3.2',
  basicConstraints: '2.5.29.19',
  subjectKeyIdentifier: '2.5.29.14',
  subjectAltName: '2.5.29.17',
  extKeyUsage: '2.5.29.37',
  serverAuth: '1.3.6.1.5.5.7.3.1',
} as const;

/** The names a loopback server is reached by; `extraHost` is the host it listens on, when not loopback. */
export function loopbackAltNames(extraHost?: string): string[] {
  const names = ['localhost', '127.0.0.1', '::1'];
  if (extraHost && extraHost !== '0.0.0.0' && extraHost !== '::' && !names.includes(extraHost)) {
    names.push(extraHost);
  }
  return names;
}

export function createSelfSignedCertificate(options: SelfSignedCertificateOptions): SelfSignedCertificate {
  const now = options.now ?? new Date();
  const validityDays = options.validityDays ?? 365;
  const { publicKey, privateKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  const spki = publicKey.export({ type: 'spki', format: 'der' });

  const name = sequence(
    set(sequence(objectIdentifier(OID.commonName), utf8String(options.commonName ?? 'Local Cosmos DB'))),
  );
  const signatureAlgorithm = sequence(objectIdentifier(OID.ecdsaWithSha256));
  const serial = randomBytes(16);
  serial[0] = ((serial[0] ?? 0) & 0x7f) | 0x01; // positive and without a leading zero byte

  const notBefore = new Date(now.getTime() - 60 * 60 * 1000);
  const notAfter = new Date(now.getTime() + validityDays * 24 * 60 * 60 * 1000);

  const tbsCertificate = sequence(
    explicit(0, smallInteger(2)), // v3
    unsignedInteger(serial),
    signatureAlgorithm,
    name,
    sequence(x509Time(notBefore), x509Time(notAfter)),
    name,
    spki,
    explicit(3, sequence(...extensions(spki, options.subjectAltNames))),
  );
  const signature = sign('sha256', tbsCertificate, privateKey); // DER-encoded ECDSA signature, as X.509 wants
  const certificate = sequence(tbsCertificate, signatureAlgorithm, bitString(signature));

  return {
    certPem: toPem('CERTIFICATE', certificate),
    keyPem: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
  };
}

function extensions(spki: Buffer, altNames: readonly string[]): Buffer[] {
  if (altNames.length === 0) throw new Error('A certificate for the local server needs at least one name.');
  const generalNames = altNames.map((altName) => {
    const family = isIP(altName);
    if (family === 0) return implicitPrimitive(2, Buffer.from(altName, 'ascii')); // dNSName
    return implicitPrimitive(7, ipAddressBytes(altName, family)); // iPAddress
  });
  return [
    // A leaf, not a CA: clients trust exactly this certificate and it can sign nothing else.
    extension(OID.basicConstraints, true, sequence()),
    extension(OID.subjectKeyIdentifier, false, octetString(createHash('sha1').update(spki).digest())),
    extension(OID.subjectAltName, false, sequence(...generalNames)),
    extension(OID.extKeyUsage, false, sequence(objectIdentifier(OID.serverAuth))),
  ];
}

function extension(oid: string, critical: boolean, value: Buffer): Buffer {
  return critical
    ? sequence(objectIdentifier(oid), boolean(true), octetString(value))
    : sequence(objectIdentifier(oid), octetString(value));
}

function ipAddressBytes(address: string, family: number): Buffer {
  if (family === 4) return Buffer.from(address.split('.').map(Number));
  // Expand "::" so the address has eight 16-bit groups.
  const [head = '', tail] = address.split('::');
  const headGroups = head === '' ? [] : head.split(':');
  const tailGroups = tail === undefined || tail === '' ? [] : tail.split(':');
  const missing = 8 - headGroups.length - tailGroups.length;
  const groups = [...headGroups, ...Array<string>(tail === undefined ? 0 : missing).fill('0'), ...tailGroups];
  if (groups.length !== 8 || groups.some((group) => group.includes('.'))) {
    throw new Error(`Unsupported IPv6 address for the local certificate: ${address}`);
  }
  const bytes = Buffer.alloc(16);
  groups.forEach((group, index) => bytes.writeUInt16BE(parseInt(group, 16), index * 2));
  return bytes;
}

function toPem(label: string, der: Buffer): string {
  const lines = der.toString('base64').match(/.{1,64}/g) ?? [];
  return `-----BEGIN ${label}-----\n${lines.join('\n')}\n-----END ${label}-----\n`;
}
