// Who is calling: the Caller every HTTP handler works for, the resolver that derives it from the request
// headers in the configured auth mode (dev users, App Service authentication or Entra ID bearer tokens),
// and the ownership check for user ids named in a request.
import type { AuthConfig } from '../config.js';
import { ForbiddenError, UnauthenticatedError } from '../errors.js';
import { resolveAppServiceCaller } from './app-service-principal.js';
import { resolveDevCaller } from './dev-users.js';
import { createEntraTokenVerifier } from './entra-token.js';

export interface Caller {
  userId: string;
  name?: string;
  /** 'aad', 'dev', ... */
  identityProvider: string;
}

export interface IdentityResolver {
  /** Throws UnauthenticatedError (401) saying what is missing or wrong. */
  resolve(headers: Headers): Promise<Caller>;
}

export interface IdentityResolverOptions {
  /** Fetches the Entra ID signing keys (default: the global fetch). */
  fetch?: typeof fetch;
  /** Clock against which token lifetimes are checked (default: the system clock). */
  now?: () => Date;
}

// The user id becomes a Cosmos DB partition key value and a Web PubSub user id.
const SAFE_USER_ID = /^[A-Za-z0-9][A-Za-z0-9._@-]{0,127}$/;

export function createIdentityResolver(
  auth: AuthConfig,
  options: IdentityResolverOptions = {},
): IdentityResolver {
  const identify = callerSource(auth, options);
  return { resolve: async (headers) => requireSafeUserId(await identify(headers)) };
}

/** Throws ForbiddenError when a userId named in a path, query or body is given and is not the caller's. */
export function assertOwnUser(caller: Caller, userId: string | undefined | null): void {
  if (userId === undefined || userId === null || userId === '' || userId === caller.userId) return;
  throw new ForbiddenError('This userId belongs to another user: a caller can reach only their own data.');
}

function callerSource(
  auth: AuthConfig,
  options: IdentityResolverOptions,
): (headers: Headers) => Caller | Promise<Caller> {
  switch (auth.mode) {
    case 'dev':
      return resolveDevCaller;
    case 'app-service':
      return resolveAppServiceCaller;
    case 'entra':
      return createEntraTokenVerifier(auth, options);
  }
}

function requireSafeUserId(caller: Caller): Caller {
  if (!SAFE_USER_ID.test(caller.userId))
    throw new UnauthenticatedError(
      "The caller's user id cannot be used: it must be 1 to 128 letters, digits, '.', '_', '@' or '-', " +
        'starting with a letter or digit.',
    );
  return caller;
}
