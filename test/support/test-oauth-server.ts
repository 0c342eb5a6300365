// A small OAuth 2.1 authorization server for tests, on loopback and a free port: metadata (RFC 8414), dynamic
// client registration, an authorization endpoint that consents at once, and a token endpoint that checks PKCE
// (S256), the redirect URI and the resource, issues refresh tokens and rotates them. It verifies its own tokens.
import { createHash, randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { OAuthError, OAuthErrorCode, type AuthInfo, type OAuthMetadata } from '@modelcontextprotocol/server';

interface Client {
  clientId: string;
  redirectUris: string[];
}

interface AccessToken {
  clientId: string;
  resource: string | undefined;
  /** Seconds since the epoch. */
  expiresAt: number;
}

export interface TestOAuthServer {
  issuer: string;
  metadata: OAuthMetadata;
  /** Checks a bearer token as the MCP server's requireBearerAuth asks. */
  verifyAccessToken(token: string): Promise<AuthInfo>;
  /** Every authorization request's query, in order. */
  authorizations: URLSearchParams[];
  /** Every token request's form, in order. */
  tokenRequests: URLSearchParams[];
  /** Every access and refresh token issued (to check none leaks). */
  issued: string[];
  /** Makes every access token issued so far expired, as time passing would. */
  expireAccessTokens(): void;
  stop(): Promise<void>;
}

const base64url = (bytes: Buffer) => bytes.toString('base64url');

async function formOf(request: IncomingMessage): Promise<URLSearchParams> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
}

export async function startTestOAuthServer(
  options: { accessTokenSeconds?: number } = {},
): Promise<TestOAuthServer> {
  const clients = new Map<string, Client>();
  const codes = new Map<
    string,
    { clientId: string; redirectUri: string; challenge: string; resource: string | undefined }
  >();
  const accessTokens = new Map<string, AccessToken>();
  const refreshTokens = new Map<string, { clientId: string; resource: string | undefined }>();
  const authorizations: URLSearchParams[] = [];
  const tokenRequests: URLSearchParams[] = [];
  const issued: string[] = [];
  let issuer = '';

  const json = (status: number, body: unknown) => ({ status, body: JSON.stringify(body) });
  const tokenError = (error: string, description: string) =>
    json(400, { error, error_description: description });

  function issue(clientId: string, resource: string | undefined) {
    const access = base64url(randomBytes(24));
    const refresh = base64url(randomBytes(24));
    const lifetime = options.accessTokenSeconds ?? 3600;
    accessTokens.set(access, { clientId, resource, expiresAt: Math.floor(Date.now() / 1000) + lifetime });
    refreshTokens.set(refresh, { clientId, resource });
    issued.push(access, refresh);
    return json(200, {
      access_token: access,
      token_type: 'Bearer',
      expires_in: lifetime,
      refresh_token: refresh,
    });
  }

  async function handle(
    request: IncomingMessage,
  ): Promise<{ status: number; body?: string; location?: string }> {
    const url = new URL(request.url ?? '/', issuer);
    if (url.pathname === '/.well-known/oauth-authorization-server') return json(200, metadata());
    if (url.pathname === '/register' && request.method === 'POST') {
      const chunks: Buffer[] = [];
      for await (const chunk of request) chunks.push(chunk as Buffer);
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { redirect_uris?: string[] };
      const clientId = `client-${base64url(randomBytes(8))}`;
      clients.set(clientId, { clientId, redirectUris: body.redirect_uris ?? [] });
      return json(201, {
        ...body,
        client_id: clientId,
        client_id_issued_at: Math.floor(Date.now() / 1000),
        token_endpoint_auth_method: 'none',
      });
    }
    if (url.pathname === '/authorize') {
      authorizations.push(url.searchParams);
      const query = url.searchParams;
      const client = clients.get(query.get('client_id') ?? '');
      const redirectUri = query.get('redirect_uri') ?? '';
      if (client === undefined || !client.redirectUris.includes(redirectUri))
        return { status: 400, body: 'unknown client or redirect_uri' };
      if (query.get('code_challenge_method') !== 'S256' || query.get('code_challenge') === null)
        return { status: 400, body: 'PKCE (S256) is required' };
      const code = base64url(randomBytes(16));
      codes.set(code, {
        clientId: client.clientId,
        redirectUri,
        challenge: query.get('code_challenge') ?? '',
        resource: query.get('resource') ?? undefined,
      });
      // The user consents at once.
      const back = new URL(redirectUri);
      back.searchParams.set('code', code);
      const state = query.get('state');
      if (state !== null) back.searchParams.set('state', state);
      return { status: 302, location: back.href };
    }
    if (url.pathname === '/token' && request.method === 'POST') {
      const form = await formOf(request);
      tokenRequests.push(form);
      if (form.get('grant_type') === 'authorization_code') {
        const code = codes.get(form.get('code') ?? '');
        codes.delete(form.get('code') ?? '');
        if (code === undefined) return tokenError('invalid_grant', 'unknown or used code');
        const verifier = form.get('code_verifier') ?? '';
        const challenge = base64url(createHash('sha256').update(verifier).digest());
        if (challenge !== code.challenge) return tokenError('invalid_grant', 'PKCE verification failed');
        if (form.get('redirect_uri') !== code.redirectUri)
          return tokenError('invalid_grant', 'redirect_uri differs');
        if (form.get('client_id') !== code.clientId) return tokenError('invalid_client', 'client differs');
        if ((form.get('resource') ?? undefined) !== code.resource)
          return tokenError('invalid_target', 'resource differs');
        return issue(code.clientId, code.resource);
      }
      if (form.get('grant_type') === 'refresh_token') {
        const held = refreshTokens.get(form.get('refresh_token') ?? '');
        refreshTokens.delete(form.get('refresh_token') ?? '');
        if (held === undefined) return tokenError('invalid_grant', 'unknown refresh token');
        return issue(held.clientId, form.get('resource') ?? held.resource);
      }
      return tokenError('unsupported_grant_type', 'only authorization_code and refresh_token');
    }
    return { status: 404 };
  }

  const http: Server = createServer((request, response) => {
    void handle(request).then(
      ({ status, body, location }) => {
        response.writeHead(status, {
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
          ...(location === undefined ? {} : { location }),
        });
        response.end(body);
      },
      () => response.writeHead(500).end(),
    );
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  issuer = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;

  function metadata(): OAuthMetadata {
    return {
      issuer,
      authorization_endpoint: `${issuer}/authorize`,
      token_endpoint: `${issuer}/token`,
      registration_endpoint: `${issuer}/register`,
      response_types_supported: ['code'],
      grant_types_supported: ['authorization_code', 'refresh_token'],
      code_challenge_methods_supported: ['S256'],
      token_endpoint_auth_methods_supported: ['none'],
    };
  }

  return {
    issuer,
    metadata: metadata(),
    verifyAccessToken(token) {
      const held = accessTokens.get(token);
      if (held === undefined || held.expiresAt <= Math.floor(Date.now() / 1000))
        return Promise.reject(new OAuthError(OAuthErrorCode.InvalidToken, 'unknown or expired token'));
      return Promise.resolve({
        token,
        clientId: held.clientId,
        scopes: [],
        expiresAt: held.expiresAt,
        ...(held.resource === undefined ? {} : { resource: new URL(held.resource) }),
      });
    },
    authorizations,
    tokenRequests,
    issued,
    expireAccessTokens() {
      for (const token of accessTokens.values()) token.expiresAt = 0;
    },
    stop: () =>
      new Promise((resolve) => {
        http.closeAllConnections();
        http.close(() => resolve());
      }),
  };
}
