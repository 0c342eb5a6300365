import { describe, expect, it } from 'vitest';
import { ApiError, createApiClient, describeError, toApiError } from './client';
import { devIdentity } from '../auth/identity';

const problem = (status: number, body: object, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify(body), {
    status,
    headers: { 'content-type': 'application/problem+json', ...headers },
  });

describe('the API client', () => {
  it('sends the identity’s headers and turns a problem+json answer into an ApiError', async () => {
    const seen: Headers[] = [];
    const fetchImpl = (_input: RequestInfo | URL, init?: RequestInit) => {
      seen.push(new Headers(init?.headers));
      return Promise.resolve(problem(404, { detail: 'No conversation.', code: 'not-found' }));
    };
    const api = createApiClient(devIdentity('user_002'), '', fetchImpl);
    const error = await api.json('GET', '/api/history/conversations/x').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({ status: 404, detail: 'No conversation.', code: 'not-found' });
    expect(seen[0]?.get('x-ms-client-principal-id')).toBe('user_002');
  });

  it('says which limit a 429 hit and when to retry, from Retry-After', async () => {
    const error = await toApiError(
      problem(
        429,
        { detail: 'You have sent 20 messages this minute (the limit).', code: 'rate-limited' },
        {
          'retry-after': '42',
        },
      ),
    );
    expect(error.retryAfter).toBe(42);
    expect(describeError(error)).toBe(
      'You have sent 20 messages this minute (the limit). Try again in 42 s.',
    );
  });

  it('reads when to retry from the quota problem’s retryAfterSeconds when Retry-After cannot be read', async () => {
    // A page on another origin sees only the headers CORS exposes; the problem says it too.
    const error = await toApiError(
      problem(429, {
        detail: 'Too many messages this minute (5 allowed per minute).',
        code: 'quota_exceeded',
        limit: 'messages-per-minute',
        allowed: 5,
        current: 5,
        retryAfterSeconds: 9,
      }),
    );
    expect(error.retryAfter).toBe(9);
    expect(error.problem).toMatchObject({ limit: 'messages-per-minute', allowed: 5, current: 5 });
    expect(describeError(error)).toBe(
      'Too many messages this minute (5 allowed per minute). Try again in 9 s.',
    );
  });

  it('falls back to the status when the answer is not a problem', async () => {
    const error = await toApiError(
      new Response('<html>bad gateway</html>', { status: 502, statusText: 'Bad Gateway' }),
    );
    expect(error.detail).toBe('502 Bad Gateway');
    expect(error.code).toBeUndefined();
  });
});
