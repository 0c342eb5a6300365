// The signer's key cache: one user delegation key for many URLs, renewed before it would end inside a URL's
// lifetime, a failed ask not kept; and what each URL's SAS grants.
import type { UserDelegationKey } from '@azure/storage-blob';
import { describe, expect, it } from 'vitest';
import {
  CLOCK_SKEW_MS,
  createBlobSasSigner,
  SAS_VERSION,
  type DelegationKeySource,
} from './blob-sas-signer.js';

const HOUR = 3_600_000;

/** A key source that records every ask and answers with a key for exactly the window asked. */
function keySource(failFirst = false) {
  const asks: { startsOn: Date; expiresOn: Date }[] = [];
  const source: DelegationKeySource = {
    accountName: 'acct',
    url: 'https://acct.blob.core.windows.net/',
    getUserDelegationKey(startsOn: Date, expiresOn: Date) {
      asks.push({ startsOn, expiresOn });
      if (failFirst && asks.length === 1) return Promise.reject(new Error('identity not ready'));
      const key: UserDelegationKey = {
        signedObjectId: '00000000-0000-0000-0000-000000000001',
        signedTenantId: '00000000-0000-0000-0000-000000000002',
        signedStartsOn: startsOn,
        signedExpiresOn: expiresOn,
        signedService: 'b',
        signedVersion: SAS_VERSION,
        value: Buffer.alloc(32, asks.length).toString('base64'),
      };
      return Promise.resolve(key);
    },
  };
  return { source, asks };
}

const blob = {
  url: 'https://acct.blob.core.windows.net/attachments/exports/x/abc.tar.gz',
  containerName: 'attachments',
  name: 'exports/x/abc.tar.gz',
};

describe('createBlobSasSigner', () => {
  it('signs an HTTPS URL for one blob with the permissions and end asked, starting before now', async () => {
    const { source } = keySource();
    const now = new Date('2026-03-01T10:00:00Z');
    const signer = createBlobSasSigner(source, { now: () => now });
    const url = new URL(
      await signer.signedUrl(blob, { permissions: 'r', expiresOn: new Date(now.getTime() + HOUR) }),
    );
    expect(`${url.origin}${url.pathname}`).toBe(blob.url);
    const query = url.searchParams;
    expect(query.get('sp')).toBe('r');
    expect(query.get('sr')).toBe('b');
    expect(query.get('spr')).toBe('https');
    expect(query.get('sv')).toBe(SAS_VERSION);
    expect(query.get('skoid')).toBe('00000000-0000-0000-0000-000000000001');
    expect(query.get('st')).toBe(new Date(now.getTime() - CLOCK_SKEW_MS).toISOString().replace('.000', ''));
    expect(query.get('se')).toBe('2026-03-01T11:00:00Z');
    expect(query.get('sig')).toMatch(/^[A-Za-z0-9+/]+=*$/);
    const write = new URL(
      await signer.signedUrl(
        { ...blob, url: 'http://127.0.0.1:1/acct/attachments/exports/x/abc.tar.gz' },
        {
          permissions: 'cw',
          expiresOn: new Date(now.getTime() + HOUR),
        },
      ),
    );
    expect(write.searchParams.get('sp')).toBe('cw');
    expect(write.searchParams.get('spr')).toBe('https,http');
  });

  it('asks for one key for many URLs, and a new one before the key would end inside a URL', async () => {
    const { source, asks } = keySource();
    let now = new Date('2026-03-01T10:00:00Z');
    const signer = createBlobSasSigner(source, { now: () => now });
    const sign = () =>
      signer.signedUrl(blob, { permissions: 'r', expiresOn: new Date(now.getTime() + HOUR / 4) });
    await Promise.all([sign(), sign(), sign()]);
    now = new Date(now.getTime() + 20 * HOUR);
    await sign();
    expect(asks).toHaveLength(1);
    expect(asks[0]?.startsOn.getTime()).toBe(new Date('2026-03-01T10:00:00Z').getTime() - CLOCK_SKEW_MS);
    // 23 hours on, a quarter-hour URL would end within the key's last hour: the key is renewed first.
    now = new Date(new Date('2026-03-01T10:00:00Z').getTime() + 23 * HOUR);
    await sign();
    expect(asks).toHaveLength(2);
    expect(asks[1]?.expiresOn.getTime()).toBeGreaterThan(now.getTime() + 20 * HOUR);
  });

  it('asks for a key long enough for a URL that outlives a day, and asks again after a failed ask', async () => {
    const { source, asks } = keySource(true);
    const now = new Date('2026-03-01T10:00:00Z');
    const signer = createBlobSasSigner(source, { now: () => now });
    const grant = { permissions: 'r', expiresOn: new Date(now.getTime() + 48 * HOUR) };
    await expect(signer.signedUrl(blob, grant)).rejects.toThrow('identity not ready');
    await signer.signedUrl(blob, grant);
    expect(asks).toHaveLength(2);
    expect(asks[1]?.expiresOn.getTime()).toBeGreaterThanOrEqual(grant.expiresOn.getTime() + HOUR);
  });

  it('hands out the URL on the public endpoint when one is given, signed for the same blob', async () => {
    const now = new Date('2026-03-01T10:00:00Z');
    const grant = { permissions: 'cw', expiresOn: new Date(now.getTime() + HOUR) };
    const direct = new URL(
      await createBlobSasSigner(keySource().source, { now: () => now }).signedUrl(blob, grant),
    );
    const proxied = new URL(
      await createBlobSasSigner(keySource().source, {
        now: () => now,
        publicEndpoint: 'http://127.0.0.1:7071/local/blob/acct/',
      }).signedUrl(blob, grant),
    );
    expect(`${proxied.origin}${proxied.pathname}`).toBe(
      'http://127.0.0.1:7071/local/blob/acct/attachments/exports/x/abc.tar.gz',
    );
    // The same signature: it binds the blob and the query, and the emulator is called over HTTPS behind the proxy.
    expect(proxied.search).toBe(direct.search);
  });
});
