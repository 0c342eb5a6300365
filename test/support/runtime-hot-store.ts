// The hot store a running local runtime uses (HOT_STORE: Cosmos DB's container or Redis), opened beside the app's
// own, so a test reads or drops hot entries through the port whichever adapter holds them.
import type { Database } from '@azure/cosmos';
import type { TokenCredential } from '@azure/identity';
import type { AppConfig } from '../../shared/app/config.js';
import { hotStoreOpener } from '../../shared/app/hot-store-opener.js';
import type { HotStore } from '../../shared/conversation/hot-store.js';

/** Locally Redis is reached by URL: no sign-in is asked for. */
const noCredential: TokenCredential = { getToken: () => Promise.resolve(null) };

/** Runs `use` with the runtime's hot store, closed after (a Redis client holds a connection). */
export async function withRuntimeHotStore<T>(
  runtime: { config: AppConfig; clients: { database: Database } },
  use: (hot: HotStore) => Promise<T>,
): Promise<T> {
  const opened = hotStoreOpener(runtime.config, noCredential)(runtime.clients.database);
  try {
    return await use(opened.store);
  } finally {
    await opened.close();
  }
}
