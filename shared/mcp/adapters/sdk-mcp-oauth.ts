// OAuth 2.1 for MCP servers with the client package's auth(): an OAuthClientProvider over one user's grant held in
// memory (the use-case seals and stores it), and the authorizer that starts and finishes the authorization code flow.
import {
  auth,
  extractWWWAuthenticateParams,
  LATEST_PROTOCOL_VERSION,
  OAuthError,
  type OAuthClientMetadata,
  type OAuthClientProvider,
  type OAuthDiscoveryState,
  type StoredOAuthClientInformation,
  type StoredOAuthTokens,
} from '@modelcontextprotocol/client';
import { ensureError } from '../../errors.js';
import {
  McpAuthorizationRequiredError,
  McpCallError,
  type McpAuthorizer,
  type McpOAuthGrant,
} from '../mcp-connector.js';
import type { OutboundPolicy } from '../outbound-address.js';
import { guardedFetch, OutboundRefusedError, type AddressLookup } from './guarded-fetch.js';

/** What the authorization server's answers are read up to. */
const MAX_OAUTH_RESPONSE_BYTES = 256 * 1024;
/** A token this close to its expiry is refreshed before use. */
export const REFRESH_MARGIN_MS = 30_000;

/**
 * The provider auth() and the transports drive. Interactive (a user starting or finishing a connection) it registers
 * a client and records the authorization URL; headless (a tool call) a request for consent throws
 * McpAuthorizationRequiredError, since nobody is there to give it.
 */
export class GrantProvider implements OAuthClientProvider {
  /** The grant has changed (a refresh, a registration, discovery): the caller stores it again. */
  changed = false;
  authorizationUrl: URL | undefined;
  #verifier: string | undefined;

  constructor(
    public grant: McpOAuthGrant,
    private readonly options: {
      redirectUrl: string;
      interactive: boolean;
      host: string;
      state?: string;
      verifier?: string;
      now?: () => number;
    },
  ) {}

  get redirectUrl(): string {
    return this.options.redirectUrl;
  }

  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: 'Chat backend',
      redirect_uris: [this.options.redirectUrl],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
    };
  }

  state(): string {
    if (this.options.state === undefined) throw new McpAuthorizationRequiredError(this.options.host);
    return this.options.state;
  }

  #set(change: Partial<McpOAuthGrant>): void {
    this.grant = { ...this.grant, ...change };
    this.changed = true;
  }

  clientInformation(): StoredOAuthClientInformation | undefined {
    // A registration holds its redirect URL: another one (the service moved) needs a new registration.
    if (this.grant.redirectUrl !== this.options.redirectUrl) return undefined;
    return this.grant.client as StoredOAuthClientInformation | undefined;
  }

  saveClientInformation(client: StoredOAuthClientInformation): void {
    if (!this.options.interactive) throw new McpAuthorizationRequiredError(this.options.host);
    this.#set({ client: { ...client }, redirectUrl: this.options.redirectUrl });
  }

  tokens(): StoredOAuthTokens | undefined {
    return this.grant.tokens as StoredOAuthTokens | undefined;
  }

  saveTokens(tokens: StoredOAuthTokens): void {
    const now = this.options.now?.() ?? Date.now();
    const { tokensExpireAt: _, ...rest } = this.grant;
    this.grant = rest;
    this.#set({
      tokens: { ...tokens },
      ...(tokens.expires_in === undefined
        ? {}
        : { tokensExpireAt: new Date(now + tokens.expires_in * 1000).toISOString() }),
    });
  }

  redirectToAuthorization(authorizationUrl: URL): void {
    if (!this.options.interactive) throw new McpAuthorizationRequiredError(this.options.host);
    this.authorizationUrl = authorizationUrl;
  }

  saveCodeVerifier(codeVerifier: string): void {
    this.#verifier = codeVerifier;
  }

  codeVerifier(): string {
    const verifier = this.options.verifier ?? this.#verifier;
    if (verifier === undefined) throw new McpAuthorizationRequiredError(this.options.host);
    return verifier;
  }

  saveDiscoveryState(state: OAuthDiscoveryState): void {
    this.#set({ discovery: JSON.parse(JSON.stringify(state)) as Record<string, unknown> });
  }

  discoveryState(): OAuthDiscoveryState | undefined {
    return this.grant.discovery as OAuthDiscoveryState | undefined;
  }

  invalidateCredentials(scope: 'all' | 'client' | 'tokens' | 'verifier' | 'discovery'): void {
    const { client, tokens, tokensExpireAt, discovery, ...kept } = this.grant;
    const keep = {
      client: scope !== 'all' && scope !== 'client',
      tokens: scope !== 'all' && scope !== 'tokens',
      discovery: scope !== 'all' && scope !== 'discovery',
    };
    this.grant = {
      ...kept,
      ...(keep.client && client !== undefined ? { client } : {}),
      ...(keep.tokens && tokens !== undefined ? { tokens } : {}),
      ...(keep.tokens && tokensExpireAt !== undefined ? { tokensExpireAt } : {}),
      ...(keep.discovery && discovery !== undefined ? { discovery } : {}),
    };
    this.changed = true;
  }
}

/** The grant's access token expires within the margin and a refresh token can renew it. */
export function needsRefresh(grant: McpOAuthGrant, now: number): boolean {
  return (
    typeof grant.tokens?.refresh_token === 'string' &&
    grant.tokensExpireAt !== undefined &&
    new Date(grant.tokensExpireAt).getTime() - REFRESH_MARGIN_MS <= now
  );
}

/** An authorization failure in words the user can read, with the host, never a token. */
export function readableOAuthFailure(error: unknown, host: string): Error {
  if (error instanceof McpAuthorizationRequiredError || error instanceof McpCallError) return error;
  const cause = ensureError(error);
  if (error instanceof OutboundRefusedError) return new McpCallError(error.message, { cause });
  const detail =
    error instanceof OAuthError ? `${error.code}${error.message ? `: ${error.message}` : ''}` : cause.message;
  return new McpCallError(`authorizing with the MCP server at ${host} failed: ${detail}`.slice(0, 500), {
    cause,
  });
}

/**
 * The server's own challenge: an unauthenticated initialize, whose 401 names where its protected resource metadata
 * is and the scope it wants (both may differ from what the well-known paths would give).
 */
async function challengeOf(
  fetch: ReturnType<typeof guardedFetch>,
  target: { url: string; headers: Record<string, string> },
): Promise<{ resourceMetadataUrl?: URL; scope?: string }> {
  try {
    const response = await fetch(target.url, {
      method: 'POST',
      headers: {
        ...target.headers,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 0,
        method: 'initialize',
        params: {
          protocolVersion: LATEST_PROTOCOL_VERSION,
          capabilities: {},
          clientInfo: { name: 'chat-backend', version: '1.0.0' },
        },
      }),
    });
    await response.body?.cancel();
    if (response.status !== 401) return {};
    const { resourceMetadataUrl, scope } = extractWWWAuthenticateParams(response);
    return {
      ...(resourceMetadataUrl === undefined ? {} : { resourceMetadataUrl }),
      ...(scope === undefined ? {} : { scope }),
    };
  } catch {
    // Discovery goes on from the well-known paths.
    return {};
  }
}

export function createSdkMcpAuthorizer(policy: OutboundPolicy, lookup?: AddressLookup): McpAuthorizer {
  const fetchFn = () => guardedFetch({ ...policy, maxResponseBytes: MAX_OAUTH_RESPONSE_BYTES }, lookup);
  return {
    async start(target, grant, { redirectUrl, state, timeoutMs }) {
      const host = new URL(target.url).host;
      const provider = new GrantProvider(grant, { redirectUrl, interactive: true, host, state });
      try {
        const fetch = fetchFn();
        const challenge = await challengeOf(fetch, target);
        await withTimeout(
          auth(provider, {
            serverUrl: target.url,
            fetchFn: fetch,
            forceReauthorization: true,
            ...challenge,
          }),
          timeoutMs,
        );
      } catch (error) {
        throw readableOAuthFailure(error, host);
      }
      const verifier = provider.codeVerifier();
      if (provider.authorizationUrl === undefined)
        throw new McpCallError(`the MCP server at ${host} gave no authorization URL`);
      return { authorizationUrl: provider.authorizationUrl.href, verifier, grant: provider.grant };
    },

    async finish(target, grant, { redirectUrl, code, iss, verifier, timeoutMs }) {
      const host = new URL(target.url).host;
      const provider = new GrantProvider(grant, { redirectUrl, interactive: true, host, verifier });
      let result: string;
      try {
        result = await withTimeout(
          auth(provider, {
            serverUrl: target.url,
            authorizationCode: code,
            ...(iss === undefined ? {} : { iss }),
            fetchFn: fetchFn(),
          }),
          timeoutMs,
        );
      } catch (error) {
        throw readableOAuthFailure(error, host);
      }
      if (result !== 'AUTHORIZED' || provider.grant.tokens === undefined)
        throw new McpCallError(`the authorization server of ${host} gave no token`);
      return provider.grant;
    },
  };
}

function withTimeout<T>(work: Promise<T>, timeoutMs: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error('timed out')), timeoutMs);
  });
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}
