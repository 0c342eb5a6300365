// Personal API keys composed over Cosmos DB: the store, the verifier the identity resolver hands keys to (none when
// the operator has keys off), and the services the /api/api-keys endpoints call.
import type { Database } from '@azure/cosmos';
import { createCosmosApiKeyStore } from '../api-keys/adapters/cosmos-api-key-store.js';
import type { ApiKeyServices } from '../api-keys/api-keys.js';
import { API_KEYS_CONTAINER, USER_API_KEYS_CONTAINER } from '../api-keys/contracts.js';
import { ApiKeyVerifier } from '../api-keys/key-verifier.js';
import type { AppConfig } from './config.js';

export interface ApiKeyWiring {
  services: ApiKeyServices;
  /** Undefined with API_KEYS=off: the resolver then refuses every key. */
  verifier: ApiKeyVerifier | undefined;
}

export function composeApiKeys(config: AppConfig, database: Database): ApiKeyWiring {
  const store = createCosmosApiKeyStore({
    credentials: database.container(API_KEYS_CONTAINER),
    owners: database.container(USER_API_KEYS_CONTAINER),
  });
  const verifier = config.apiKeys.enabled
    ? new ApiKeyVerifier(store, { cacheMs: config.apiKeys.cacheMs })
    : undefined;
  return {
    services: { store, config: config.apiKeys, forget: (keyId) => verifier?.forget(keyId) },
    verifier,
  };
}
