// The offline model on its own HTTP server on 127.0.0.1, for tests and benchmarks (the local runtime
// mounts createOfflineModel on its main server instead).
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createOfflineModel, type OfflineModelOptions } from './offline-model.js';

export interface OfflineModelServer {
  /** e.g. `http://127.0.0.1:41234/offline-model/v1`: what an OpenAI client takes as baseURL. */
  baseUrl: string;
  close(): Promise<void>;
}

export async function startOfflineModelServer(
  options: OfflineModelOptions & { port?: number },
): Promise<OfflineModelServer> {
  const model = createOfflineModel(options);
  const server = createServer((req, res) => {
    model
      .handleRequest(req, res)
      .then((handled) => {
        if (!handled) {
          res.writeHead(404, { 'content-type': 'application/json' });
          res.end(
            JSON.stringify({
              error: { message: `Not found: ${req.url ?? ''}`, type: 'invalid_request_error' },
            }),
          );
        }
      })
      .catch(() => res.destroy());
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}${options.pathPrefix.replace(/\/+$/, '')}`,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        // Keep-alive connections of the client would otherwise hold close() open.
        server.closeAllConnections();
      }),
  };
}
