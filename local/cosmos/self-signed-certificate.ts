// Makes a fresh self-signed TLS certificate (ECDSA P-256) for a local server (Cosmos DB, Blob Storage) at start-up,
// valid for loopback names. The bundled one of @vercel/cosmosdb-server has no subjectAltName and expired in 2021.
// @peculiar/x509 needs a Reflect metadata polyfill loaded before it: keep these two imports in this order.
import 'reflect-metadata';
import {
  BasicConstraintsExtension,
  ExtendedKeyUsage,
  ExtendedKeyUsageExtension,
  PemConverter,
  SubjectAlternativeNameExtension,
  SubjectKeyIdentifierExtension,
  X509CertificateGenerator,
} from '@peculiar/x509';
import { randomBytes, webcrypto } from 'node:crypto';
import { isIP } from 'node:net';

export interface SelfSignedCertificate {
  /** PEM certificate: the server presents it and clients trust it as their only CA. */
  certPem: string;
  /** PEM PKCS#8 private key, held in memory only. */
  keyPem: string;
}

interface SelfSignedCertificateOptions {
  /** Host names and IP addresses the certificate is valid for. */
  subjectAltNames: readonly string[];
  /** Who the certificate names: `Local Cosmos DB` unless told. */
  commonName?: string;
  /** Validity starts an hour before `now` to tolerate clock skew. */
  now?: Date;
  validityDays?: number;
}

const algorithm = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' };

/** The names a loopback server is reached by; `extraHost` is the host it listens on, when not loopback. */
export function loopbackAltNames(extraHost?: string): string[] {
  const names = ['localhost', '127.0.0.1', '::1'];
  if (extraHost && extraHost !== '0.0.0.0' && extraHost !== '::' && !names.includes(extraHost)) {
    names.push(extraHost);
  }
  return names;
}

export async function createSelfSignedCertificate(
  options: SelfSignedCertificateOptions,
): Promise<SelfSignedCertificate> {
  if (options.subjectAltNames.length === 0) {
    throw new Error('A certificate for the local server needs at least one name.');
  }
  const now = options.now ?? new Date();
  const validityDays = options.validityDays ?? 365;
  const keys = await webcrypto.subtle.generateKey(algorithm, true, ['sign', 'verify']);
  const serial = randomBytes(16);
  serial[0] = ((serial[0] ?? 0) & 0x7f) | 0x01; // positive and without a leading zero byte

  const certificate = await X509CertificateGenerator.createSelfSigned(
    {
      serialNumber: serial.toString('hex'),
      name: `CN=${options.commonName ?? 'Local Cosmos DB'}`,
      notBefore: new Date(now.getTime() - 60 * 60 * 1000),
      notAfter: new Date(now.getTime() + validityDays * 24 * 60 * 60 * 1000),
      keys,
      signingAlgorithm: algorithm,
      extensions: [
        // A leaf, not a CA: clients trust exactly this certificate and it can sign nothing else.
        new BasicConstraintsExtension(false, undefined, true),
        await SubjectKeyIdentifierExtension.create(keys.publicKey, false, webcrypto),
        new SubjectAlternativeNameExtension(
          options.subjectAltNames.map((name) => ({ type: isIP(name) === 0 ? 'dns' : 'ip', value: name })),
        ),
        new ExtendedKeyUsageExtension([ExtendedKeyUsage.serverAuth]),
      ],
    },
    webcrypto,
  );
  const pkcs8 = await webcrypto.subtle.exportKey('pkcs8', keys.privateKey);
  return { certPem: certificate.toString('pem'), keyPem: PemConverter.encode(pkcs8, 'PRIVATE KEY') };
}
