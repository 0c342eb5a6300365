// OAuth grants of MCP servers: a user's authorization started (its state bound to them, the server and the PKCE
// verifier), the callback redeemed once, and the grant a call uses, opened here and sealed again when it changes.
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { ensureError, NotFoundError } from '../errors.js';
import {
  mcpOAuthDocumentId,
  sealedValueSchema,
  type McpOAuthDocument,
  type McpServerView,
} from './contracts.js';
import type { McpOAuthGrant, McpTarget } from './mcp-connector.js';
import { operatorServersFor, type McpAudienceMember, type McpServices } from './mcp-services.js';
import type { SecretBox } from './secret-box.js';

/** An authorization started is redeemed within this long, or not at all. */
export const OAUTH_STATE_TTL_MS = 10 * 60_000;
const STATE_CONTEXT = 'mcp-oauth-state';

interface OAuthState {
  /** The user who started it. */
  u: string;
  /** The server. */
  s: string;
  /** The nonce the stored pending authorization holds (with its verifier). */
  n: string;
  /** Expires at (ms since the epoch). */
  e: number;
}

function grantContext(userId: string, serverId: string, what: string): string {
  return `${serverId}/${userId}/oauth-${what}`;
}

/** The state parameter: sealed under the app's key, so only this service can make or read one. */
export function encodeState(box: SecretBox, state: OAuthState): string {
  return Buffer.from(JSON.stringify(box.seal(JSON.stringify(state), STATE_CONTEXT))).toString('base64url');
}

export function decodeState(box: SecretBox, text: string): OAuthState | undefined {
  try {
    const sealed = sealedValueSchema.parse(JSON.parse(Buffer.from(text, 'base64url').toString('utf8')));
    const state = JSON.parse(box.open(sealed, STATE_CONTEXT)) as Partial<OAuthState>;
    if (
      typeof state.u !== 'string' ||
      typeof state.s !== 'string' ||
      typeof state.n !== 'string' ||
      typeof state.e !== 'number'
    )
      return undefined;
    return { u: state.u, s: state.s, n: state.n, e: state.e };
  } catch {
    return undefined;
  }
}

/** The grant as a call uses it: the sealed parts opened. */
export function openGrant(box: SecretBox, held: McpOAuthDocument | undefined): McpOAuthGrant {
  if (held === undefined) return {};
  const open = (what: string, value: McpOAuthDocument['client']) =>
    value === undefined
      ? undefined
      : (JSON.parse(box.open(value, grantContext(held.userId, held.serverId, what))) as Record<
          string,
          unknown
        >);
  const client = open('client', held.client);
  const tokens = open('tokens', held.tokens);
  return {
    ...(client === undefined ? {} : { client }),
    ...(tokens === undefined ? {} : { tokens }),
    ...(held.tokensExpireAt === undefined ? {} : { tokensExpireAt: held.tokensExpireAt }),
    ...(held.discovery === undefined ? {} : { discovery: held.discovery }),
    ...(held.redirectUrl === undefined ? {} : { redirectUrl: held.redirectUrl }),
  };
}

function sealedGrant(
  services: Pick<McpServices, 'box' | 'now'>,
  key: { userId: string; serverId: string },
  grant: McpOAuthGrant,
  rest: Pick<McpOAuthDocument, 'required' | 'pending'>,
): McpOAuthDocument {
  const seal = (what: string, value: Record<string, unknown> | undefined) =>
    value === undefined
      ? undefined
      : services.box.seal(JSON.stringify(value), grantContext(key.userId, key.serverId, what));
  const client = seal('client', grant.client);
  const tokens = seal('tokens', grant.tokens);
  return {
    id: mcpOAuthDocumentId(key.serverId),
    kind: 'mcp-oauth',
    userId: key.userId,
    serverId: key.serverId,
    required: rest.required,
    ...(grant.redirectUrl === undefined ? {} : { redirectUrl: grant.redirectUrl }),
    ...(client === undefined ? {} : { client }),
    ...(tokens === undefined ? {} : { tokens }),
    ...(tokens === undefined || grant.tokensExpireAt === undefined
      ? {}
      : { tokensExpireAt: grant.tokensExpireAt }),
    ...(grant.discovery === undefined ? {} : { discovery: grant.discovery }),
    ...(rest.pending === undefined ? {} : { pending: rest.pending }),
    updatedAt: (services.now?.() ?? new Date()).toISOString(),
  };
}

/** What GET shows of a user's grant: `connected` with tokens, `required` once the server asked for them. */
export function authorizationOf(held: McpOAuthDocument | undefined): McpServerView['authorization'] {
  if (held?.tokens !== undefined) return 'connected';
  return held?.required === true ? 'required' : undefined;
}

/** Where a server is reached for a user: its url and headers, and their OAuth grant (stored back when it changes). */
export async function withGrant(
  services: McpServices,
  userId: string,
  serverId: string,
  base: Omit<McpTarget, 'oauth'>,
): Promise<McpTarget> {
  const held = await services.store.getOAuth(userId, serverId);
  // The tokens this use opened: if the stored ones differ when it ends, another call refreshed them meanwhile, and
  // what this use did to its copy (a refresh of its own, or dropping tokens it found refused) does not replace them.
  const opened = held?.grant.tokens?.data;
  return {
    ...base,
    oauth: {
      grant: openGrant(services.box, held?.grant),
      save: async (grant) => {
        // A refresh keeps what else the item holds (an authorization under way, whether the server asked).
        const current = (await services.store.getOAuth(userId, serverId))?.grant;
        const replaced = current?.tokens !== undefined && current.tokens.data !== opened;
        let kept = grant;
        if (replaced) {
          const { tokens: fresh, tokensExpireAt: freshExpiry } = openGrant(services.box, current);
          const { tokens: _mine, tokensExpireAt: _myExpiry, ...rest } = grant;
          kept = {
            ...rest,
            ...(fresh === undefined ? {} : { tokens: fresh }),
            ...(freshExpiry === undefined ? {} : { tokensExpireAt: freshExpiry }),
          };
        }
        await services.store.putOAuth(
          sealedGrant(services, { userId, serverId }, kept, {
            required: current?.required ?? held?.grant.required ?? false,
            ...(current?.pending === undefined ? {} : { pending: current.pending }),
          }),
        );
      },
      required: () => markAuthorizationRequired(services, userId, serverId, { onlyIfTokens: opened }),
    },
  };
}

/** The server asked for a token the user does not have (or that no longer works): their tokens go, Connect shows. */
export async function markAuthorizationRequired(
  services: McpServices,
  userId: string,
  serverId: string,
  /** The sealed tokens a failed use had (none: undefined): tokens stored since (a refresh, a connect) are kept. */
  options?: { onlyIfTokens: string | undefined },
): Promise<void> {
  const held = (await services.store.getOAuth(userId, serverId))?.grant;
  if (options !== undefined && held?.tokens !== undefined && held.tokens.data !== options.onlyIfTokens)
    return;
  const {
    tokens: _tokens,
    tokensExpireAt: _expiry,
    ...kept
  } = held ?? {
    id: mcpOAuthDocumentId(serverId),
    kind: 'mcp-oauth' as const,
    userId,
    serverId,
    required: true,
    updatedAt: '',
  };
  await services.store.putOAuth({
    ...kept,
    required: true,
    updatedAt: (services.now?.() ?? new Date()).toISOString(),
  });
  services.onChange?.(userId);
}

/** A server the user may use, found by id (an operator's one for them, or their own). */
async function reachable(services: McpServices, who: McpAudienceMember, serverId: string) {
  if (serverId.startsWith('mcp-op-')) {
    const operator = operatorServersFor(services.config, who).find((server) => server.id === serverId);
    if (operator !== undefined) return { url: operator.url, headers: operator.headers };
  } else {
    const own = await services.store.get(who.userId, serverId);
    if (own !== undefined) return { url: own.url, headers: {} };
  }
  throw new NotFoundError('No such MCP server.');
}

export function oauthCallbackUrl(apiOrigin: string, serverId: string): string {
  return `${apiOrigin}/api/mcp-servers/${serverId}/oauth/callback`;
}

/** Starts the authorization code flow: the URL the page sends the user to. */
export async function startMcpOAuth(
  services: McpServices,
  caller: McpAudienceMember,
  serverId: string,
  apiOrigin: string,
): Promise<{ authorizationUrl: string }> {
  const server = await reachable(services, caller, serverId);
  const held = await services.store.getOAuth(caller.userId, serverId);
  const now = (services.now?.() ?? new Date()).getTime();
  const nonce = randomBytes(16).toString('hex');
  const expiresAt = now + OAUTH_STATE_TTL_MS;
  const state = encodeState(services.box, { u: caller.userId, s: serverId, n: nonce, e: expiresAt });
  const started = await services.authorizer.start(server, openGrant(services.box, held?.grant), {
    redirectUrl: oauthCallbackUrl(apiOrigin, serverId),
    state,
    timeoutMs: services.config.toolTimeoutMs,
  });
  await services.store.putOAuth(
    sealedGrant(services, { userId: caller.userId, serverId }, started.grant, {
      required: held?.grant.required ?? true,
      pending: {
        nonce,
        verifier: services.box.seal(
          started.verifier,
          grantContext(caller.userId, serverId, `verifier-${nonce}`),
        ),
        expiresAt: new Date(expiresAt).toISOString(),
      },
    }),
  );
  return { authorizationUrl: started.authorizationUrl };
}

export type OAuthCallbackOutcome =
  | { ok: true; userId: string }
  | { ok: false; reason: 'invalid_state' | 'expired' | 'denied' | 'failed'; detail?: string };

function sameText(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}

/**
 * Redeems the authorization server's answer: the state must be this service's, for this server, unexpired, and
 * match the pending authorization, which it ends (a second use of the same state finds none).
 */
export async function finishMcpOAuth(
  services: McpServices,
  serverId: string,
  answer: { state?: string; code?: string; error?: string; iss?: string },
  apiOrigin: string,
): Promise<OAuthCallbackOutcome> {
  const state = answer.state === undefined ? undefined : decodeState(services.box, answer.state);
  if (state === undefined || state.s !== serverId) return { ok: false, reason: 'invalid_state' };
  const now = (services.now?.() ?? new Date()).getTime();
  if (state.e <= now) return { ok: false, reason: 'expired' };
  const held = await services.store.getOAuth(state.u, serverId);
  const pending = held?.grant.pending;
  if (held === undefined || pending === undefined || !sameText(pending.nonce, state.n))
    return { ok: false, reason: 'invalid_state' };
  if (new Date(pending.expiresAt).getTime() <= now) return { ok: false, reason: 'expired' };
  // Single use: the pending authorization ends before its code is redeemed; a racing second use finds it gone.
  const { pending: _used, ...ended } = held.grant;
  if (!(await services.store.putOAuth(ended, held.etag))) return { ok: false, reason: 'invalid_state' };
  if (answer.error !== undefined) return { ok: false, reason: 'denied', detail: answer.error };
  if (answer.code === undefined) return { ok: false, reason: 'invalid_state' };
  try {
    const server = await reachable(services, { userId: state.u }, serverId).catch(() =>
      // The operator's server given to the user's group: the start checked the audience, the callback has no groups.
      {
        const operator = services.config.operatorServers.find((each) => each.id === serverId);
        if (operator === undefined) throw new NotFoundError('No such MCP server.');
        return { url: operator.url, headers: operator.headers };
      },
    );
    const verifier = services.box.open(
      pending.verifier,
      grantContext(state.u, serverId, `verifier-${pending.nonce}`),
    );
    const grant = await services.authorizer.finish(server, openGrant(services.box, ended), {
      redirectUrl: oauthCallbackUrl(apiOrigin, serverId),
      code: answer.code,
      ...(answer.iss === undefined ? {} : { iss: answer.iss }),
      verifier,
      timeoutMs: services.config.toolTimeoutMs,
    });
    await services.store.putOAuth(
      sealedGrant(services, { userId: state.u, serverId }, grant, { required: true }),
    );
  } catch (error) {
    return { ok: false, reason: 'failed', detail: ensureError(error).message.slice(0, 200) };
  }
  services.onChange?.(state.u);
  return { ok: true, userId: state.u };
}

/** The user's tokens for the server are forgotten (the server may still hold them until they expire). */
export async function disconnectMcpOAuth(
  services: McpServices,
  caller: McpAudienceMember,
  serverId: string,
): Promise<void> {
  await reachable(services, caller, serverId);
  await markAuthorizationRequired(services, caller.userId, serverId);
}
