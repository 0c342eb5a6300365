// The local Cosmos DB server's worker thread (started by startLocalCosmos in local-cosmos.ts): serves the account on
// its own event loop, so the requests, handlers and journal writes never take the app's thread.
import { parentPort, workerData } from 'node:worker_threads';

import { serveLocalCosmos } from './cosmos-server.js';
import type { CosmosWorkerData, CosmosWorkerReady } from './local-cosmos.js';
import { serveCalls, transferError } from './thread-calls.js';

const port = parentPort;
if (port === null) throw new Error('cosmos-worker.ts runs as a worker thread (startLocalCosmos starts it).');
const data = workerData as CosmosWorkerData;

try {
  const server = await serveLocalCosmos(data.options, data.certificate);
  serveCalls(
    (listener) => port.on('message', listener),
    (message) => port.postMessage(message),
    data.calls,
    {
      flush: () => server.flush(),
      compact: () => server.compact(),
      stats: () => server.stats(),
      resetStats: () => server.resetStats(),
      diagnostics: () => server.diagnostics(),
      stop: async () => {
        await server.stop();
        // Nothing left to serve: the thread may end once this answer is out.
        setImmediate(() => {
          data.calls.port.close();
          port.close();
        });
      },
    },
  );
  port.postMessage({
    type: 'ready',
    endpoint: server.endpoint,
    key: server.key,
    certPem: server.certPem,
  } satisfies CosmosWorkerReady);
} catch (error) {
  port.postMessage({ type: 'failed', error: transferError(error) } satisfies CosmosWorkerReady);
  data.calls.port.close();
  port.close();
}
