import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SignJWT, UnsecuredJWT, exportJWK, generateKeyPair } from 'jose';
import type { CryptoKey, JWK } from 'jose';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import type { AuthConfig } from './settings.js';
import { DependencyError, UnauthenticatedError } from '../errors.js';
import { createIdentityResolver } from './identity-resolver.js';
import { acceptedIssuers } from './entra-token.js';

const TENANT = '72f988bf-86f1-41af-91ab-2d7cd011db47';
const ISSUER_V2 = `https://login.microsoftonline.com/${TENANT}/v2.0`;
const ISSUER_V1 = `https://sts.windows.net/${TENANT}/`;
const API_CLIENT_ID = '3fa85f64-5717-4562-b3fc-2c963f66afa6';
const OID = '0f8fad5b-d9cb-469f-a165-70867728950e';
const NOW = new Date('2025-06-01T12:00:00Z');
const nowSeconds = NOW.getTime() / 1000;

interface SigningKey {
  kid: string;
  privateKey: CryptoKey;
  jwk: JWK;
}

let published: JWK[] = [];
let baseUrl = '';
const server = createServer((request, response) => {
  if (request.url === '/keys') {
    response.writeHead(200, { 'content-type': 'application/json' });
    response.end(JSON.stringify({ keys: published }));
  } else {
    response.writeHead(500).end();
  }
});

let current: SigningKey;
let rotated: SigningKey;
let unpublished: SigningKey;

async function signingKey(kid: string): Promise<SigningKey> {
  const { publicKey, privateKey } = await generateKeyPair('RS256');
  return { kid, privateKey, jwk: { ...(await exportJWK(publicKey)), kid, alg: 'RS256', use: 'sig' } };
}

beforeAll(async () => {
  [current, rotated, unpublished] = await Promise.all([
    signingKey('key-1'),
    signingKey('key-2'),
    signingKey('key-x'),
  ]);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
});

afterEach(() => {
  vi.useRealTimers();
  published = [];
});

function entraConfig(overrides: Partial<Extract<AuthConfig, { mode: 'entra' }>> = {}): AuthConfig {
  return {
    mode: 'entra',
    tenantId: TENANT,
    audiences: [`api://${API_CLIENT_ID}`, API_CLIENT_ID],
    issuer: ISSUER_V2,
    jwksUrl: `${baseUrl}/keys`,
    scope: 'user_impersonation',
    ...overrides,
  };
}

/** A resolver whose JWKS requests are counted (through the fetch option). */
function countingResolver(config = entraConfig()) {
  const requests: string[] = [];
  const countingFetch: typeof fetch = (input, init) => {
    requests.push(input instanceof Request ? input.url : input.toString());
    return fetch(input, init);
  };
  return { resolver: createIdentityResolver(config, { fetch: countingFetch, now: () => NOW }), requests };
}

/** A token with the usual claims, `claims` overriding them (undefined leaves that claim out of the token). */
function sign(
  claims: Record<string, unknown> = {},
  key: SigningKey = current,
  kid = key.kid,
): Promise<string> {
  return new SignJWT({
    iss: ISSUER_V2,
    aud: `api://${API_CLIENT_ID}`,
    iat: nowSeconds - 60,
    nbf: nowSeconds - 60,
    exp: nowSeconds + 3600,
    oid: OID,
    name: 'Alice Johnson',
    scp: 'user_impersonation',
    ...claims,
  })
    .setProtectedHeader({ alg: 'RS256', kid, typ: 'JWT' })
    .sign(key.privateKey);
}

const bearer = (token: string) => new Headers({ authorization: `Bearer ${token}` });

async function expectRejected(headers: Headers, message: RegExp, config = entraConfig()) {
  published = [current.jwk];
  const { resolver } = countingResolver(config);
  const error: unknown = await resolver.resolve(headers).catch((caught: unknown) => caught);
  expect(error).toBeInstanceOf(UnauthenticatedError);
  const text = (error as Error).message;
  expect(text).toMatch(message);
  const token = headers.get('authorization')?.split(' ').at(-1) ?? '';
  for (const part of token.split('.').filter((segment) => segment.length > 8))
    expect(text).not.toContain(part);
}

describe('entra mode: accepted tokens', () => {
  it('takes the caller from the oid and name claims of a valid v2 token', async () => {
    published = [current.jwk];
    const { resolver, requests } = countingResolver();
    await expect(resolver.resolve(bearer(await sign()))).resolves.toEqual({
      userId: OID,
      name: 'Alice Johnson',
      identityProvider: 'aad',
    });
    expect(requests).toEqual([`${baseUrl}/keys`]);
  });

  it("takes the caller's groups from the groups claim, and none from an overage reference", async () => {
    published = [current.jwk];
    const { resolver } = countingResolver();
    const librarians = '5b7e8f21-0c3d-4a52-9e11-3f6c1a2b4d5e';
    await expect(
      resolver.resolve(bearer(await sign({ groups: [librarians, 'b2c3d4e5-0000-4000-8000-000000000001'] }))),
    ).resolves.toMatchObject({ userId: OID, groups: [librarians, 'b2c3d4e5-0000-4000-8000-000000000001'] });
    const overage = await resolver.resolve(
      bearer(await sign({ _claim_names: { groups: 'src1' }, hasgroups: true })),
    );
    expect(overage).not.toHaveProperty('groups');
  });

  it('accepts every configured audience and falls back to preferred_username for the name', async () => {
    published = [current.jwk];
    const { resolver } = countingResolver();
    const token = await sign({
      aud: API_CLIENT_ID,
      name: undefined,
      preferred_username: 'alice@contoso.com',
    });
    await expect(resolver.resolve(new Headers({ Authorization: `bearer ${token}` }))).resolves.toEqual({
      userId: OID,
      name: 'alice@contoso.com',
      identityProvider: 'aad',
    });
  });

  it('accepts the v1 issuer (sts.windows.net) of a GUID tenant', async () => {
    published = [current.jwk];
    const { resolver } = countingResolver();
    await expect(resolver.resolve(bearer(await sign({ iss: ISSUER_V1 })))).resolves.toMatchObject({
      userId: OID,
    });
  });

  it('tolerates 60 s of clock skew on expiry', async () => {
    published = [current.jwk];
    const { resolver } = countingResolver();
    await expect(resolver.resolve(bearer(await sign({ exp: nowSeconds - 30 })))).resolves.toMatchObject({
      userId: OID,
    });
  });

  it('accepts a token whose scp lists the scope among others', async () => {
    published = [current.jwk];
    const { resolver } = countingResolver();
    await expect(
      resolver.resolve(bearer(await sign({ scp: 'User.Read user_impersonation' }))),
    ).resolves.toMatchObject({ userId: OID });
  });

  it('admits an app-only token with the configured service role, acting as its own oid', async () => {
    published = [current.jwk];
    const { resolver } = countingResolver(entraConfig({ serviceAppRole: 'Chat.Service' }));
    const servicePrincipal = '9a8b7c6d-1111-4222-8333-444455556666';
    await expect(
      resolver.resolve(
        bearer(
          await sign({
            idtyp: 'app',
            scp: undefined,
            name: undefined,
            roles: ['Chat.Service'],
            oid: servicePrincipal,
          }),
        ),
      ),
    ).resolves.toEqual({ userId: servicePrincipal, name: undefined, identityProvider: 'aad' });
  });

  it('reuses the fetched keys for later tokens', async () => {
    published = [current.jwk];
    const { resolver, requests } = countingResolver();
    await resolver.resolve(bearer(await sign()));
    await resolver.resolve(bearer(await sign({ oid: '11111111-2222-3333-4444-555555555555' })));
    expect(requests).toHaveLength(1);
  });

  it('refetches the key set for a key rotated in after the first fetch', async () => {
    published = [current.jwk];
    const { resolver, requests } = countingResolver();
    await resolver.resolve(bearer(await sign()));
    published = [current.jwk, rotated.jwk];
    const rotatedToken = await sign({}, rotated);

    // Right after a fetch jose will not refetch (30 s cooldown), so the new key is still unknown...
    await expect(resolver.resolve(bearer(rotatedToken))).rejects.toThrow(
      /key that Entra ID does not publish/,
    );
    expect(requests).toHaveLength(1);

    // ...and once the cooldown has passed an unknown kid triggers one refetch that finds it.
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(Date.now() + 31_000);
    await expect(resolver.resolve(bearer(rotatedToken))).resolves.toMatchObject({ userId: OID });
    expect(requests).toHaveLength(2);
    await expect(resolver.resolve(bearer(await sign()))).resolves.toMatchObject({ userId: OID });
    expect(requests).toHaveLength(2);
  });
});

describe('entra mode: refused requests', () => {
  it('refuses a request without an Authorization header', async () => {
    await expectRejected(new Headers(), /Missing Authorization header.*Bearer/);
  });

  it('refuses another scheme', async () => {
    await expectRejected(new Headers({ authorization: `Basic ${btoa('alice:secret')}` }), /Bearer scheme/);
  });

  it.each(['not-a-jwt', 'abc.def', 'a.b.c.d', '%%%.@@@.###', `${'a'.repeat(20_000)}.b.c`])(
    'refuses the malformed token %j',
    async (token) => {
      await expectRejected(bearer(token), /malformed/);
    },
  );

  it('refuses a JWT with a header that is not JSON', async () => {
    const token = await sign();
    await expectRejected(bearer(`bm90IGpzb24${token.slice(token.indexOf('.'))}`), /malformed/);
  });

  it('refuses a token whose signature does not match the published key', async () => {
    await expectRejected(bearer(await sign({}, unpublished, current.kid)), /signature is not valid/);
  });

  it('refuses a token whose payload was altered after signing', async () => {
    const [header, , signature] = (await sign()).split('.');
    const payload = Buffer.from(
      JSON.stringify({
        oid: '11111111-2222-3333-4444-555555555555',
        iss: ISSUER_V2,
        aud: API_CLIENT_ID,
        exp: nowSeconds + 3600,
      }),
    ).toString('base64url');
    await expectRejected(bearer(`${header}.${payload}.${signature}`), /signature is not valid/);
  });

  it('refuses a token signed with a key the tenant does not publish', async () => {
    await expectRejected(bearer(await sign({}, unpublished)), /key that Entra ID does not publish/);
  });

  it('refuses a token for another audience', async () => {
    await expectRejected(bearer(await sign({ aud: 'api://another-api' })), /not meant for this API/);
  });

  it('refuses a token from another issuer', async () => {
    await expectRejected(
      bearer(await sign({ iss: 'https://login.microsoftonline.com/another-tenant/v2.0' })),
      /not issued by the configured Entra ID tenant/,
    );
  });

  it('refuses the v1 issuer when the tenant is configured by domain name', async () => {
    const config = entraConfig({
      tenantId: 'contoso.onmicrosoft.com',
      issuer: 'https://login.microsoftonline.com/contoso.onmicrosoft.com/v2.0',
    });
    await expectRejected(
      bearer(
        await sign({
          iss: 'https://sts.windows.net/contoso.onmicrosoft.com/',
          aud: API_CLIENT_ID,
        }),
      ),
      /not issued by the configured Entra ID tenant/,
      config,
    );
  });

  it('refuses an expired token beyond the clock tolerance', async () => {
    await expectRejected(bearer(await sign({ exp: nowSeconds - 61 })), /expired/);
  });

  it('refuses a token that is not valid yet', async () => {
    await expectRejected(bearer(await sign({ nbf: nowSeconds + 120 })), /not valid yet/);
  });

  it('refuses an unsigned token (alg none)', async () => {
    const token = new UnsecuredJWT({ oid: OID })
      .setIssuer(ISSUER_V2)
      .setAudience(API_CLIENT_ID)
      .setExpirationTime(nowSeconds + 3600)
      .encode();
    await expectRejected(bearer(token), /must be signed with RS256/);
  });

  it('refuses an HS256 token, even one keyed with the public key material', async () => {
    const secret = new TextEncoder().encode(JSON.stringify(current.jwk));
    const token = await new SignJWT({ oid: OID })
      .setProtectedHeader({ alg: 'HS256', kid: current.kid })
      .setIssuer(ISSUER_V2)
      .setAudience(API_CLIENT_ID)
      .setExpirationTime(nowSeconds + 3600)
      .sign(secret);
    await expectRejected(bearer(token), /must be signed with RS256/);
  });

  it('refuses a token without an oid claim', async () => {
    await expectRejected(bearer(await sign({ oid: undefined })), /no oid/);
  });

  it('refuses a token whose oid is not a safe user id', async () => {
    await expectRejected(bearer(await sign({ oid: 'users/../admin' })), /user id cannot be used/);
  });

  it('refuses a token without an exp claim (it would never expire)', async () => {
    await expectRejected(bearer(await sign({ exp: undefined })), /no expiry \(exp claim\)/);
  });

  it('refuses a user token without the delegated scope this API exposes', async () => {
    await expectRejected(
      bearer(await sign({ scp: 'User.Read' })),
      /needs the delegated scope "user_impersonation"/,
    );
    await expectRejected(bearer(await sign({ scp: undefined })), /app-only tokens are not accepted/);
  });

  it('refuses an app-only token (no scp, no roles) as a user', async () => {
    await expectRejected(
      bearer(await sign({ idtyp: 'app', scp: undefined, name: undefined })),
      /does not grant access to this API/,
    );
  });

  it('refuses an app-only token whose role is not the configured service role', async () => {
    await expectRejected(
      bearer(await sign({ idtyp: 'app', scp: undefined, roles: ['Something.Else'] })),
      /app role "Chat.Service"/,
      entraConfig({ serviceAppRole: 'Chat.Service' }),
    );
  });

  it('refuses an app-only token with a role when no service role is configured', async () => {
    await expectRejected(
      bearer(await sign({ idtyp: 'app', scp: undefined, roles: ['Chat.Service'] })),
      /app-only tokens are not accepted/,
    );
  });

  it('reports an unreachable key set as a dependency failure (503), not as the caller’s fault', async () => {
    const { resolver } = countingResolver(entraConfig({ jwksUrl: `${baseUrl}/unavailable` }));
    const error: unknown = await resolver.resolve(bearer(await sign())).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(DependencyError);
    expect((error as DependencyError).status).toBe(503);
  });
});

describe('acceptedIssuers', () => {
  it('adds the v1 issuer only for a GUID tenant', () => {
    expect(
      acceptedIssuers({
        mode: 'entra',
        tenantId: TENANT,
        audiences: ['x'],
        issuer: ISSUER_V2,
        jwksUrl: '',
        scope: 'user_impersonation',
      }),
    ).toEqual([ISSUER_V2, ISSUER_V1]);
    expect(
      acceptedIssuers({
        mode: 'entra',
        tenantId: 'contoso.onmicrosoft.com',
        audiences: ['x'],
        issuer: 'https://login.microsoftonline.com/contoso.onmicrosoft.com/v2.0',
        jwksUrl: '',
        scope: 'user_impersonation',
      }),
    ).toEqual(['https://login.microsoftonline.com/contoso.onmicrosoft.com/v2.0']);
  });
});
