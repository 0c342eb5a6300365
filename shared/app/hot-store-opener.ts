// Opens the hot store HOT_STORE names (Cosmos DB's `hot-conversations` container by default, or Redis), with the
// health check it adds and how it closes.
import type { Database } from '@azure/cosmos';
import type { TokenCredential } from '@azure/identity';
import { HOT_CONVERSATIONS_CONTAINER, HOT_STORE_TTL_SECONDS } from '../chat/contracts/documents.js';
import { TAIL_BYTES } from '../chat/hot-working-memory.js';
import { createCosmosHotStore } from '../conversation/adapters/cosmos-hot-store.js';
import { createRedisHotStore } from '../conversation/adapters/redis-hot-store.js';
import type { HotStore } from '../conversation/hot-store.js';
import type { HealthCheck } from '../health.js';
import { ConfigError } from '../settings/setting.js';
import type { AppConfig } from './config.js';

/** The hot store HOT_STORE names, with its health check and how it closes (a Redis client holds a connection). */
export interface OpenedHotStore {
  store: HotStore;
  /**
   * The most bytes of working memory's messages a turn rewrites before they go to a base (hot-working-memory.ts).
   * Cosmos DB charges a write by the whole item's size; Redis splices in what changed, and would keep every base
   * in the session's hash (it expires as a whole), so it keeps working memory in one entry.
   */
  workingMemoryTailBytes: number;
  checks: HealthCheck[];
  close(): Promise<void>;
}

/**
 * Checks HOT_STORE against the configuration at once, so a hot store this build cannot open stops start-up before
 * any client is made, and answers how to open it once the database is there.
 */
export function hotStoreOpener(
  config: AppConfig,
  credential: TokenCredential,
): (database: Database) => OpenedHotStore {
  const { connection } = config.redis;
  switch (config.hotStore.kind) {
    case 'cosmos':
      return (database) => ({
        store: createCosmosHotStore(database.container(HOT_CONVERSATIONS_CONTAINER)),
        workingMemoryTailBytes: TAIL_BYTES,
        checks: [],
        close: () => Promise.resolve(),
      });
    case 'redis':
      if (connection === undefined)
        throw new ConfigError([
          { setting: 'HOT_STORE', problem: 'is "redis", but neither REDIS_URL nor REDIS_HOST_NAME is set' },
        ]);
      return () => {
        const store = createRedisHotStore({
          connection,
          credential,
          ttlSeconds: HOT_STORE_TTL_SECONDS,
          connectTimeoutMs: config.redis.connectTimeoutMs,
          reconnectMaxDelayMs: config.redis.reconnectMaxDelayMs,
          log: console,
        });
        return {
          store,
          workingMemoryTailBytes: Number.POSITIVE_INFINITY,
          checks: [{ name: 'redis', check: () => store.ping() }],
          close: () => store.close(),
        };
      };
  }
}
