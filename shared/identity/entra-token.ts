// Entra ID bearer tokens: verifies `Authorization: Bearer <jwt>` against the tenant's signing keys (RS256; audience,
// issuer and an `exp` required; an unknown key refetches the key set, at most once per 30 s), requires the API's
// delegated scope or the service app role a setting names, and takes the caller from the oid claim.
import { createRemoteJWKSet, customFetch, errors, jwtVerify } from 'jose';
import type { JWTPayload, JWTVerifyGetKey } from 'jose';
import type { AuthConfig } from './settings.js';
import { AppError, DependencyError, UnauthenticatedError } from '../errors.js';
import type { Caller, IdentityResolverOptions } from './caller.js';

export type EntraAuthConfig = Extract<AuthConfig, { mode: 'entra' }>;

const GUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const JWT_SHAPE = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/;
const MAX_TOKEN_CHARS = 16_384;
const CLOCK_TOLERANCE_SECONDS = 60;
const MALFORMED = 'The bearer token is malformed: expected a signed JWT access token.';

export function createEntraTokenVerifier(
  config: EntraAuthConfig,
  options: IdentityResolverOptions,
): (headers: Headers) => Promise<Caller> {
  const getKey = signingKeys(config.jwksUrl, options.fetch);
  const issuers = acceptedIssuers(config);
  return async (headers) => {
    const token = bearerToken(headers);
    let payload: JWTPayload;
    try {
      ({ payload } = await jwtVerify(token, getKey, {
        algorithms: ['RS256'],
        audience: config.audiences,
        issuer: issuers,
        clockTolerance: CLOCK_TOLERANCE_SECONDS,
        // jose checks a lifetime only when the token states one: a token without exp would never expire.
        requiredClaims: ['exp'],
        ...(options.now === undefined ? {} : { currentDate: options.now() }),
      }));
    } catch (error) {
      if (error instanceof AppError || !(error instanceof errors.JOSEError)) throw error;
      throw new UnauthenticatedError(describeRejection(error));
    }
    assertGrantsAccess(payload, config);
    return callerFromClaims(payload);
  };
}

/**
 * A token is for this API only when it carries the delegated scope the API exposes (a user signed in through a
 * client) or, when AUTH_SERVICE_APP_ROLE names one, that app role (an app-only token of a service caller, which then
 * acts as its own oid: the service principal's object id, never a user's). A valid token for the right audience
 * with neither, such as an app-only token from any app in the tenant, is refused.
 */
function assertGrantsAccess(payload: JWTPayload, config: EntraAuthConfig): void {
  const scopes = typeof payload.scp === 'string' ? payload.scp.split(' ') : [];
  if (scopes.includes(config.scope)) return;
  const roles = Array.isArray(payload.roles) ? payload.roles : [];
  if (config.serviceAppRole !== undefined && scopes.length === 0 && roles.includes(config.serviceAppRole))
    return;
  throw new UnauthenticatedError(
    `The bearer token does not grant access to this API: it needs the delegated scope "${config.scope}"` +
      (config.serviceAppRole === undefined
        ? ' (app-only tokens are not accepted).'
        : ` or, for an app-only token, the app role "${config.serviceAppRole}".`),
  );
}

/** The configured issuer, plus the v1 issuer (sts.windows.net), which names the tenant only by its GUID. */
export function acceptedIssuers(config: EntraAuthConfig): string[] {
  const issuers = new Set([config.issuer]);
  if (GUID.test(config.tenantId)) issuers.add(`https://sts.windows.net/${config.tenantId}/`);
  return [...issuers];
}

// An unknown key is the token's fault (401); failing to get the keys at all is a dependency failure (503).
function signingKeys(jwksUrl: string, fetchKeys: typeof fetch | undefined): JWTVerifyGetKey {
  const jwks = createRemoteJWKSet(new URL(jwksUrl), fetchKeys ? { [customFetch]: fetchKeys } : {});
  return async (header, token) => {
    try {
      return await jwks(header, token);
    } catch (error) {
      if (
        error instanceof errors.JWKSNoMatchingKey ||
        error instanceof errors.JWKSMultipleMatchingKeys ||
        error instanceof errors.JOSENotSupported
      )
        throw error;
      throw new DependencyError(
        'entra-id',
        'The Entra ID signing keys could not be fetched; try again shortly.',
        {
          cause: error,
        },
      );
    }
  };
}

function bearerToken(headers: Headers): string {
  const authorization = headers.get('authorization')?.trim();
  if (!authorization)
    throw new UnauthenticatedError(
      'Missing Authorization header: send "Authorization: Bearer <access token>" with an Entra ID access token for this API.',
    );
  const token = /^Bearer +(\S+)$/i.exec(authorization)?.[1];
  if (token === undefined)
    throw new UnauthenticatedError(
      'The Authorization header must use the Bearer scheme: "Authorization: Bearer <access token>".',
    );
  if (token.length > MAX_TOKEN_CHARS || !JWT_SHAPE.test(token)) throw new UnauthenticatedError(MALFORMED);
  return token;
}

function describeRejection(error: errors.JOSEError): string {
  if (error instanceof errors.JWTExpired) return 'The bearer token has expired: get a new access token.';
  if (error instanceof errors.JWTClaimValidationFailed) {
    if (error.claim === 'aud')
      return 'The bearer token is not meant for this API: its audience is not accepted.';
    if (error.claim === 'iss') return 'The bearer token was not issued by the configured Entra ID tenant.';
    if (error.claim === 'nbf') return 'The bearer token is not valid yet.';
    if (error.claim === 'exp' && error.reason === 'missing')
      return 'The bearer token has no expiry (exp claim): use an access token issued by Entra ID.';
    return `The bearer token's "${error.claim}" claim is invalid.`;
  }
  if (error instanceof errors.JOSEAlgNotAllowed) return 'The bearer token must be signed with RS256.';
  if (error instanceof errors.JWSSignatureVerificationFailed)
    return "The bearer token's signature is not valid.";
  if (error instanceof errors.JWKSNoMatchingKey || error instanceof errors.JWKSMultipleMatchingKeys)
    return 'The bearer token is signed with a key that Entra ID does not publish for this tenant.';
  return MALFORMED;
}

function callerFromClaims(payload: JWTPayload): Caller {
  const userId = stringClaim(payload.oid);
  if (userId === undefined)
    throw new UnauthenticatedError(
      'The bearer token has no oid (object id) claim: use a user access token issued for this API.',
    );
  const groups = groupsClaim(payload.groups);
  return {
    userId,
    name: stringClaim(payload.name) ?? stringClaim(payload.preferred_username),
    identityProvider: 'aad',
    ...(groups.length > 0 ? { groups } : {}),
  };
}

/**
 * The token's `groups` claim (group object ids, when the app registration asks for them). A user in too many
 * groups gets none in the token (`_claim_names` points at Microsoft Graph instead), which is not looked up here:
 * such a user is named by id where a setting needs them.
 */
function groupsClaim(value: unknown): string[] {
  if (!Array.isArray(value)) return [];
  return value.filter((group): group is string => typeof group === 'string' && group.trim() !== '');
}

function stringClaim(value: unknown): string | undefined {
  return typeof value === 'string' && value.trim() !== '' ? value : undefined;
}
