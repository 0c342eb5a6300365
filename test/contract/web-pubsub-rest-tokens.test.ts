// The app's Web PubSub client with an access key (as the local runtime makes it) against the local Web PubSub: its
// REST calls reuse one signed token per URL while the token is valid, and the service accepts every one of them.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { TokenCredential } from '@azure/identity';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { LocalWebPubSub } from '../../local/web-pubsub/local-web-pubsub.js';
import { createWebPubSubClient } from '../../shared/app/service-clients.js';
import { accessKeyOf } from '../../shared/streaming/adapters/web-pubsub-rest-tokens.js';
import { TEST_ACCESS_KEY, TEST_HUB } from '../support/web-pubsub-server.js';

const noCredential: TokenCredential = {
  getToken: () => Promise.reject(new Error('the client uses its access key, never a credential')),
};

let pubsub: LocalWebPubSub;
let server: Server;
let connectionString: string;
/** The bearer token of every REST call the service received, in order. */
const bearers: string[] = [];

beforeAll(async () => {
  pubsub = new LocalWebPubSub({ accessKey: TEST_ACCESS_KEY, pathPrefix: '/webpubsub' });
  server = createServer((req, res) => {
    bearers.push(req.headers.authorization ?? '');
    void pubsub.handleRequest(req, res).then((handled) => {
      if (!handled) res.writeHead(404).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  connectionString = pubsub.connectionString(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
});

afterEach(() => {
  vi.useRealTimers();
  bearers.length = 0;
});

afterAll(async () => {
  await pubsub?.close();
  await new Promise<void>((resolve) => server?.close(() => resolve()));
});

function appClient() {
  return createWebPubSubClient(
    { webPubSub: { hub: TEST_HUB, endpoint: undefined, connectionString } },
    noCredential,
    true,
  );
}

describe("the app's Web PubSub client with an access key", () => {
  it('signs one token per URL for many sends, seconds apart, and the service accepts each', async () => {
    // Only Date is faked: a token signed per call would carry a new issue time at each send.
    vi.useFakeTimers({ toFake: ['Date'] });
    const client = appClient();
    for (let send = 0; send < 5; send += 1) {
      await client.group('session-a').sendToAll({ send });
      await client.group('session-b').sendToAll({ send });
      vi.setSystemTime(Date.now() + 2_000);
    }
    expect(bearers).toHaveLength(10);
    expect(new Set(bearers).size).toBe(2);
    expect(pubsub.stats().restCalls).toBeGreaterThanOrEqual(10);
  });

  it('signs a new token for a URL once the one it has nears its expiry', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    const client = appClient();
    await client.group('session-c').sendToAll({ send: 1 });
    vi.setSystemTime(Date.now() + 10 * 60_000);
    await client.group('session-c').sendToAll({ send: 2 });
    // An hour's token is not used in its last minutes: the next call gets a fresh one, which the service accepts.
    vi.setSystemTime(Date.now() + 47 * 60_000);
    await client.group('session-c').sendToAll({ send: 3 });
    expect(bearers).toHaveLength(3);
    expect(bearers[0]).toBe(bearers[1]);
    expect(bearers[2]).not.toBe(bearers[1]);
  });

  it('reads the access key from the connection string', () => {
    expect(accessKeyOf(connectionString)).toBe(TEST_ACCESS_KEY);
    expect(accessKeyOf('Endpoint=https://example.webpubsub.azure.com;Version=1.0;')).toBeUndefined();
  });
});
