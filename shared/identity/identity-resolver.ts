// The IdentityResolver of the configured auth mode: dev users, App Service authentication or Entra ID bearer
// tokens. Whatever the mode, the user id must be safe to use as a partition key and a Web PubSub user id.
import { UnauthenticatedError } from '../errors.js';
import { ID_FORMATS, isId } from '../ids.js';
import { resolveAppServiceCaller } from './app-service-principal.js';
import type { Caller, IdentityResolver, IdentityResolverOptions } from './caller.js';
import { resolveDevCaller } from './dev-users.js';
import { createEntraTokenVerifier } from './entra-token.js';
import type { AuthConfig } from './settings.js';

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
  // The user id becomes a Cosmos DB partition key value and a Web PubSub user id.
  if (!isId('userId', caller.userId))
    throw new UnauthenticatedError(`The caller's user id cannot be used: it ${ID_FORMATS.userId.message}.`);
  return caller;
}
