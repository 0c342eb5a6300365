// The IdentityResolver of the configured auth mode: dev users, App Service authentication or Entra ID bearer
// tokens. Whatever the mode, the user id must be safe to use as a partition key and a Web PubSub user id.
import { UnauthenticatedError } from '../errors.js';
import { resolveAppServiceCaller } from './app-service-principal.js';
import type { Caller, IdentityResolver, IdentityResolverOptions } from './caller.js';
import { resolveDevCaller } from './dev-users.js';
import { createEntraTokenVerifier } from './entra-token.js';
import type { AuthConfig } from './settings.js';

// The user id becomes a Cosmos DB partition key value and a Web PubSub user id.
const SAFE_USER_ID = /^[A-Za-z0-9][A-Za-z0-9._@-]{0,127}$/;

export function createIdentityResolver(
  auth: AuthConfig,
  options: IdentityResolverOptions = {},
): IdentityResolver {
  const identify = callerSource(auth, options);
  return { resolve: async (headers) => requireSafeUserId(await identify(headers)) };
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
