// Service tokens verified once stay checked on every use: their URL and their expiry hold as on the first.
import { SignJWT } from 'jose';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { UnauthorizedError } from './rest-errors.js';
import { AccessTokens } from './access-tokens.js';

const KEY = 'access-tokens-test-key-0123456789';
const URL_A = 'http://127.0.0.1:1/webpubsub/api/hubs/chat/groups/a/:send?api-version=2024-12-01';
const URL_B = 'http://127.0.0.1:1/webpubsub/api/hubs/chat/groups/b/:send?api-version=2024-12-01';

function serviceToken(audience: string, expiresInSeconds: number): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT({})
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setAudience(audience)
    .setExpirationTime(now + expiresInSeconds)
    .sign(new TextEncoder().encode(KEY));
}

afterEach(() => {
  vi.useRealTimers();
});

describe('service tokens verified before', () => {
  it('are accepted again for their own URL only', async () => {
    const tokens = new AccessTokens(KEY);
    const token = await serviceToken(URL_A, 3600);
    await tokens.verifyServiceToken(token, [URL_A]);
    await tokens.verifyServiceToken(token, [URL_A]);
    await expect(tokens.verifyServiceToken(token, [URL_B])).rejects.toBeInstanceOf(UnauthorizedError);
  });

  it('are refused once expired', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    const tokens = new AccessTokens(KEY);
    const token = await serviceToken(URL_A, 60);
    await tokens.verifyServiceToken(token, [URL_A]);
    vi.setSystemTime(Date.now() + 10 * 60_000);
    await expect(tokens.verifyServiceToken(token, [URL_A])).rejects.toThrow('expired');
  });

  it('signed with another key are refused, however often they come', async () => {
    const tokens = new AccessTokens('another-key-that-is-long-enough-000');
    const token = await serviceToken(URL_A, 3600);
    await expect(tokens.verifyServiceToken(token, [URL_A])).rejects.toBeInstanceOf(UnauthorizedError);
    await expect(tokens.verifyServiceToken(token, [URL_A])).rejects.toBeInstanceOf(UnauthorizedError);
  });
});
