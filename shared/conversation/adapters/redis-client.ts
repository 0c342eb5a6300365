// Opening a node-redis client: any Redis by URL, or Azure Managed Redis by host name over TLS with Entra ID
// tokens from the app's managed identity, refreshed before they expire.
import type { TokenCredential } from '@azure/identity';
import { EntraIdCredentialsProviderFactory, REDIS_SCOPE_DEFAULT } from '@redis/entraid';
import { createClient } from 'redis';
import type { RedisConnection } from '../redis-settings.js';

/** Azure Managed Redis serves TLS on this port (its clustering proxy). */
export const AZURE_MANAGED_REDIS_PORT = 10_000;

/** What opening a client needs: the connection, a credential for Entra ID, and how long a reconnect may wait. */
export interface RedisClientOptions {
  connection: RedisConnection;
  credential?: TokenCredential | undefined;
  reconnectMaxDelayMs?: number | undefined;
}

/** A client that fails commands at once while disconnected and reconnects with capped, jittered backoff. */
export function createRedisClient(options: RedisClientOptions, connectTimeoutMs: number) {
  const maxDelay = options.reconnectMaxDelayMs ?? 5_000;
  const reconnectStrategy = (retries: number) =>
    Math.min(50 * 2 ** Math.min(retries, 16), maxDelay) + Math.floor(Math.random() * 50);
  const { connection } = options;
  if (connection.kind === 'url') {
    return createClient({
      url: connection.url,
      disableOfflineQueue: true,
      socket: { connectTimeout: connectTimeoutMs, reconnectStrategy },
    });
  }
  return createClient({
    disableOfflineQueue: true,
    socket: {
      host: connection.hostName,
      port: AZURE_MANAGED_REDIS_PORT,
      tls: true,
      servername: connection.hostName,
      connectTimeout: connectTimeoutMs,
      reconnectStrategy,
    },
    credentialsProvider: entraIdProvider(connection.managedIdentityClientId, options.credential),
  });
}

/**
 * Tokens for Azure Managed Redis, refreshed before they expire (the client re-authenticates its connection with
 * each): the user-assigned managed identity in Azure, else the app's credential (a developer's az login).
 */
function entraIdProvider(
  managedIdentityClientId: string | undefined,
  credential: TokenCredential | undefined,
) {
  const tokenManagerConfig = {
    expirationRefreshRatio: 0.8,
    retry: {
      maxAttempts: 5,
      initialDelayMs: 200,
      maxDelayMs: 5_000,
      backoffMultiplier: 2,
      jitterPercentage: 10,
    },
  };
  if (managedIdentityClientId !== undefined)
    return EntraIdCredentialsProviderFactory.createForUserAssignedManagedIdentity({
      clientId: managedIdentityClientId,
      userAssignedClientId: managedIdentityClientId,
      tokenManagerConfig,
    });
  if (credential === undefined)
    throw new Error('Azure Managed Redis needs a credential: set AZURE_CLIENT_ID, or sign in with az login.');
  return EntraIdCredentialsProviderFactory.createForDefaultAzureCredential({
    credential,
    scopes: REDIS_SCOPE_DEFAULT,
    tokenManagerConfig,
  });
}
