// The local Web PubSub mounted on a loopback node:http server for contract tests, with a factory for the real
// @azure/web-pubsub service client pointed at it (plain HTTP, so insecure connections are allowed).
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebPubSubServiceClient } from '@azure/web-pubsub';
import { LocalWebPubSub } from '../../local/web-pubsub/local-web-pubsub.js';

export const TEST_HUB = 'chat';
export const TEST_ACCESS_KEY = 'local-test-access-key-0123456789';

export interface WebPubSubTestServer {
  pubsub: LocalWebPubSub;
  /** http://127.0.0.1:<port> */
  baseUrl: string;
  connectionString: string;
  close(): Promise<void>;
}

export async function startWebPubSubServer(
  options: { reconnectGraceMs?: number } = {},
): Promise<WebPubSubTestServer> {
  const pubsub = new LocalWebPubSub({ accessKey: TEST_ACCESS_KEY, pathPrefix: '/webpubsub', ...options });
  const server = createServer((req, res) => {
    void pubsub.handleRequest(req, res).then((handled) => {
      if (!handled) res.writeHead(404).end();
    });
  });
  server.on('upgrade', (req, socket, head) => {
    if (!pubsub.handleUpgrade(req, socket, head)) socket.destroy();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    pubsub,
    baseUrl,
    connectionString: pubsub.connectionString(baseUrl),
    close: async () => {
      await pubsub.close();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

export function testServiceClient(connectionString: string, hub = TEST_HUB): WebPubSubServiceClient {
  return new WebPubSubServiceClient(connectionString, hub, { allowInsecureConnection: true });
}
