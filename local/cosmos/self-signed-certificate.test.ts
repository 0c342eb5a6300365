import { X509Certificate, createPrivateKey } from 'node:crypto';

import { beforeAll, describe, expect, it } from 'vitest';

import { createSelfSignedCertificate, loopbackAltNames } from './self-signed-certificate.js';

describe('createSelfSignedCertificate', () => {
  const now = new Date('2030-06-01T12:00:00Z');
  let keyPem: string;
  let certificate: X509Certificate;

  beforeAll(async () => {
    const created = await createSelfSignedCertificate({
      subjectAltNames: loopbackAltNames(),
      now,
      validityDays: 30,
    });
    keyPem = created.keyPem;
    certificate = new X509Certificate(created.certPem);
  });

  it('is valid for the loopback names, and only them', () => {
    expect(certificate.checkIP('127.0.0.1')).toBe('127.0.0.1');
    expect(certificate.checkIP('::1')).toBe('::1');
    expect(certificate.checkHost('localhost')).toBe('localhost');
    expect(certificate.checkHost('example.com')).toBeUndefined();
    expect(certificate.checkIP('10.0.0.1')).toBeUndefined();
  });

  it('is self-signed by the returned key, not a CA, and valid from an hour before now', () => {
    expect(certificate.verify(certificate.publicKey)).toBe(true);
    expect(certificate.checkPrivateKey(createPrivateKey(keyPem))).toBe(true);
    expect(certificate.ca).toBe(false);
    expect(certificate.issuer).toBe(certificate.subject);
    expect(new Date(certificate.validFrom).toISOString()).toBe('2030-06-01T11:00:00.000Z');
    expect(new Date(certificate.validTo).toISOString()).toBe('2030-07-01T12:00:00.000Z');
  });

  it('adds the listening host when it is not a loopback name', async () => {
    expect(loopbackAltNames('0.0.0.0')).toEqual(['localhost', '127.0.0.1', '::1']);
    const names = loopbackAltNames('dev-box.local');
    const extra = new X509Certificate(
      (await createSelfSignedCertificate({ subjectAltNames: names })).certPem,
    );
    expect(extra.checkHost('dev-box.local')).toBe('dev-box.local');
  });

  it('gives each start a fresh key and serial number', async () => {
    const other = new X509Certificate(
      (await createSelfSignedCertificate({ subjectAltNames: ['localhost'] })).certPem,
    );
    expect(other.serialNumber).not.toBe(certificate.serialNumber);
    expect(other.fingerprint256).not.toBe(certificate.fingerprint256);
  });
});
