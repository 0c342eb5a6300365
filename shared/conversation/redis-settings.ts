// Where the Redis hot store is (REDIS_URL for any Redis, REDIS_HOST_NAME for Azure Managed Redis with the app's
// Entra ID identity) and how its client behaves. Read only when HOT_STORE is redis. Rows: shared/settings/setting.ts.
import { defineSettings, intSetting, textSetting, type SettingValues } from '../settings/setting.js';

const tuning = { kind: 'default' } as const;

export const redisSettings = defineSettings({
  REDIS_URL: textSetting({
    pattern: [/^rediss?:\/\/\S+$/, 'must be a redis:// or rediss:// URL, e.g. redis://127.0.0.1:6379'],
    help:
      'Any Redis as the hot store, e.g. redis://127.0.0.1:6379 (rediss:// for TLS); a password, if any, goes in ' +
      'the URL. In Azure, use REDIS_HOST_NAME instead: Azure Managed Redis is reached with the managed identity.',
    azure: {
      kind: 'never',
      reason:
        'Azure Managed Redis is reached with the managed identity (REDIS_HOST_NAME), never with a password.',
    },
  }),
  REDIS_HOST_NAME: textSetting({
    pattern: [/^[A-Za-z0-9.-]{1,253}$/, 'must be a host name, e.g. <name>.<region>.redis.azure.net'],
    help:
      'Azure Managed Redis host name, e.g. <name>.<region>.redis.azure.net: reached on port 10000 over TLS and ' +
      "signed in with the app's managed identity (AZURE_CLIENT_ID; locally, your az login).",
    azure: { kind: 'bicep' },
  }),
  REDIS_CONNECT_TIMEOUT_MS: intSetting({
    default: 5_000,
    min: 100,
    max: 60_000,
    help: 'A connection to Redis that is not open within this time fails (and is retried with backoff).',
    azure: tuning,
  }),
  REDIS_RECONNECT_MAX_DELAY_MS: intSetting({
    default: 5_000,
    min: 50,
    max: 60_000,
    help:
      'Reconnecting to Redis backs off exponentially up to this delay; meanwhile commands fail at once (the turn ' +
      'fails cleanly) instead of queueing.',
    azure: tuning,
  }),
});

export type RedisSettingValues = SettingValues<typeof redisSettings>;

/** How the app reaches Redis: a URL (any Redis), or an Azure Managed Redis host signed in with Entra ID. */
export type RedisConnection =
  | { kind: 'url'; url: string }
  | { kind: 'azure-managed'; hostName: string; managedIdentityClientId: string | undefined };

export interface RedisConfig {
  /** Undefined when neither REDIS_URL nor REDIS_HOST_NAME is set. */
  connection: RedisConnection | undefined;
  connectTimeoutMs: number;
  reconnectMaxDelayMs: number;
}

export function redisConfig(
  values: RedisSettingValues,
  managedIdentityClientId: string | undefined,
): RedisConfig {
  const connection: RedisConnection | undefined =
    values.REDIS_HOST_NAME !== undefined
      ? { kind: 'azure-managed', hostName: values.REDIS_HOST_NAME, managedIdentityClientId }
      : values.REDIS_URL !== undefined
        ? { kind: 'url', url: values.REDIS_URL }
        : undefined;
  return {
    connection,
    connectTimeoutMs: values.REDIS_CONNECT_TIMEOUT_MS,
    reconnectMaxDelayMs: values.REDIS_RECONNECT_MAX_DELAY_MS,
  };
}
