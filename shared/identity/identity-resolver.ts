// The IdentityResolver of the configured auth mode: dev users, App Service authentication or Entra ID bearer
// tokens; and, on routes that take them, personal API keys. Whatever the mode, the user id must be safe to use as a
// partition key and a Web PubSub user id.
import { UnauthenticatedError } from '../errors.js';
import { ID_FORMATS, isId } from '../ids.js';
import { presentedApiKey, type ApiKeyAuthenticator } from './api-key-auth.js';
import { resolveAppServiceCaller } from './app-service-principal.js';
import type { Caller, IdentityResolver, IdentityResolverOptions, ResolveOptions } from './caller.js';
import { resolveDevCaller } from './dev-users.js';
import { createEntraTokenVerifier } from './entra-token.js';
import type { AuthConfig } from './settings.js';

export interface IdentityResolverParts extends IdentityResolverOptions {
  /** Resolves personal API keys; undefined when the operator has them off. */
  apiKeys?: ApiKeyAuthenticator | undefined;
}

export function createIdentityResolver(
  auth: AuthConfig,
  options: IdentityResolverParts = {},
): IdentityResolver {
  const identify = callerSource(auth, options);
  const apiKeys = options.apiKeys;
  return {
    resolve: async (headers, resolveOptions?: ResolveOptions) => {
      const key = presentedApiKey(headers);
      const takesKeys = resolveOptions?.apiKeys === true;
      if (key !== undefined) {
        if (!takesKeys)
          throw new UnauthenticatedError(
            'A personal API key is accepted only by the OpenAI-compatible API (/api/v1/...) and MCP (/api/mcp); ' +
              'this route needs the sign-in.',
          );
        if (apiKeys === undefined)
          throw new UnauthenticatedError(
            'Personal API keys are turned off on this service (its operator sets API_KEYS=on to allow them).',
          );
        return requireSafeUserId(await apiKeys.authenticate(key));
      }
      // With keys on, App Service authentication leaves these routes alone (excludedPaths), so principal headers
      // there are vouched for by nobody: only a key identifies a caller on them.
      if (takesKeys && apiKeys !== undefined && auth.mode === 'app-service')
        throw new UnauthenticatedError(
          'This route takes a personal API key: send "Authorization: Bearer cmk_..." (create one in the settings).',
        );
      return requireSafeUserId(await identify(headers));
    },
  };
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
