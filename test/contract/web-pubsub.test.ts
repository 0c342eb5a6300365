// Contract test of the local Web PubSub: the real @azure/web-pubsub server SDK and @azure/web-pubsub-client
// (plus a raw `ws` client where the wire itself is under test) against a node:http server that mounts it.
import type { WebPubSubServiceClient } from '@azure/web-pubsub';
import { type GenerateClientTokenOptions } from '@azure/web-pubsub';
import {
  SendMessageError,
  WebPubSubClient,
  WebPubSubJsonProtocol,
  WebPubSubJsonReliableProtocol,
  type WebPubSubClientProtocol,
} from '@azure/web-pubsub-client';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import type { LocalWebPubSub } from '../../local/web-pubsub/local-web-pubsub.js';
import {
  TEST_ACCESS_KEY as ACCESS_KEY,
  startWebPubSubServer,
  testServiceClient,
  type WebPubSubTestServer,
} from '../support/web-pubsub-server.js';

let webPubSubServer: WebPubSubTestServer;
let pubsub: LocalWebPubSub;
let baseUrl: string;
let service: WebPubSubServiceClient;
const started: WebPubSubClient[] = [];
const rawSockets: WebSocket[] = [];

beforeAll(async () => {
  webPubSubServer = await startWebPubSubServer({ reconnectGraceMs: 5_000 });
  ({ pubsub, baseUrl } = webPubSubServer);
  service = serviceClient(webPubSubServer.connectionString);
});

afterEach(() => {
  for (const client of started.splice(0)) client.stop();
  for (const socket of rawSockets.splice(0)) socket.terminate();
});

afterAll(async () => {
  await webPubSubServer?.close();
});

const serviceClient = testServiceClient;

interface TestClient {
  client: WebPubSubClient;
  connectionId: string;
  /** Every server message, in arrival order, as `server:<data>`. */
  received: string[];
  connectedEvents: number;
  disconnectedEvents: number;
}

async function connect(
  token: GenerateClientTokenOptions,
  protocol: WebPubSubClientProtocol = WebPubSubJsonReliableProtocol(),
): Promise<TestClient> {
  const { url } = await service.getClientAccessToken(token);
  const client = new WebPubSubClient(url, {
    protocol,
    autoReconnect: false,
    messageRetryOptions: { maxRetries: 0 },
  });
  const result: TestClient = {
    client,
    connectionId: '',
    received: [],
    connectedEvents: 0,
    disconnectedEvents: 0,
  };
  client.on('server-message', (e) => result.received.push(`server:${text(e.message.data)}`));
  client.on('disconnected', () => result.disconnectedEvents++);
  const connected = new Promise<void>((resolve) =>
    client.on('connected', (e) => {
      result.connectionId = e.connectionId;
      result.connectedEvents++;
      resolve();
    }),
  );
  started.push(client);
  await client.start();
  await connected;
  return result;
}

function text(data: unknown): string {
  if (data instanceof ArrayBuffer) return `bytes(${[...new Uint8Array(data)].join(',')})`;
  return typeof data === 'string' ? data : JSON.stringify(data);
}

async function waitFor(condition: () => boolean, what: string, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`Timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/**
 * Sends a marker to `userId` and waits for it on each of that user's `clients`: messages are delivered in order,
 * so anything wrongly addressed to a client before the marker would already be in its `received`.
 */
async function flush(userId: string, clients: TestClient[], marker: string): Promise<void> {
  await service.sendToUser(userId, marker, { contentType: 'text/plain' });
  for (const client of clients) {
    await waitFor(() => client.received.includes(`server:${marker}`), `marker ${marker}`);
  }
}

describe('local Web PubSub with the real SDKs', () => {
  it("sends to a user every connection of that user, on both JSON subprotocols, and no one else's", async () => {
    const aliceReliable = await connect({ userId: 'alice' });
    const aliceJson = await connect({ userId: 'alice' }, WebPubSubJsonProtocol());
    const bob = await connect({ userId: 'bob' });

    await service.sendToUser('alice', { note: 'for alice' });
    await waitFor(
      () => aliceReliable.received.length === 1 && aliceJson.received.length === 1,
      'alice to get her message on both connections',
    );

    await flush('alice', [aliceReliable, aliceJson], 'end-a');
    await flush('bob', [bob], 'end-b');
    expect(aliceReliable.received).toEqual(['server:{"note":"for alice"}', 'server:end-a']);
    expect(aliceJson.received).toEqual(['server:{"note":"for alice"}', 'server:end-a']);
    expect(bob.received).toEqual(['server:end-b']);
    expect(aliceReliable.connectionId).not.toBe(aliceJson.connectionId);
  });

  it('refuses group requests from clients with Forbidden, even when the token names roles', async () => {
    const plain = await connect({ userId: 'erin' });
    const withRoles = await connect({
      userId: 'frank',
      roles: ['webpubsub.joinLeaveGroup', 'webpubsub.sendToGroup'],
    });

    for (const client of [plain, withRoles]) {
      const refusals = [
        await client.client.joinGroup('private').catch((error: unknown) => error),
        await client.client.sendToGroup('private', 'psst', 'text').catch((error: unknown) => error),
        await client.client.leaveGroup('private').catch((error: unknown) => error),
      ];
      for (const refused of refusals) {
        expect(refused).toBeInstanceOf(SendMessageError);
        expect((refused as SendMessageError).errorDetail?.name).toBe('Forbidden');
      }
    }
    expect(await service.groupExists('private')).toBe(false);
  });

  it('answers a client event with an error, since no event handler is configured locally', async () => {
    const client = await connect({ userId: 'gina' });
    const error = await client.client.sendEvent('typing', 'x', 'text').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SendMessageError);
    expect((error as SendMessageError).errorDetail?.name).toBe('InternalServerError');
  });

  it('refuses expired, wrongly signed and other-hub client tokens with 401', async () => {
    const expired = await service.getClientAccessToken({ userId: 'late', expirationTimeInMinutes: -5 });
    const forged = await serviceClient(
      pubsub.connectionString(baseUrl).replace(ACCESS_KEY, 'some-other-key'),
    ).getClientAccessToken({ userId: 'forger' });
    const otherHub = await serviceClient(pubsub.connectionString(baseUrl), 'other').getClientAccessToken({
      userId: 'lost',
    });
    const good = await service.getClientAccessToken({ userId: 'fine' });

    for (const url of [
      expired.url,
      forged.url,
      `${good.baseUrl}?access_token=${otherHub.token}`,
      good.baseUrl,
    ]) {
      const client = new WebPubSubClient(url, { autoReconnect: false });
      await expect(client.start()).rejects.toThrow(/401/);
    }
    expect(pubsub.stats().connections).toBe(0);
  });

  it('refuses REST calls signed with the wrong key, and operations it does not serve', async () => {
    const forged = serviceClient(pubsub.connectionString(baseUrl).replace(ACCESS_KEY, 'some-other-key'));
    const unauthorized = await forged
      .sendToUser('anyone', 'x', { contentType: 'text/plain' })
      .catch((e: unknown) => e);
    expect(unauthorized).toMatchObject({ name: 'RestError', statusCode: 401 });
    await expect(forged.groupExists('health-probe')).rejects.toMatchObject({ statusCode: 401 });

    expect(await service.groupExists('health-probe')).toBe(false);
    const unserved = await service.sendToAll('x', { contentType: 'text/plain' }).catch((e: unknown) => e);
    expect(unserved).toMatchObject({
      name: 'RestError',
      statusCode: 404,
      message: expect.stringMatching(/sendToUser and groupExists only/) as string,
    });
  });

  it('resumes a dropped reliable connection without losing or repeating a message', async () => {
    const ivy = await connect({ userId: 'ivy' });
    await service.sendToUser('ivy', 'm0', { contentType: 'text/plain' });
    await waitFor(() => ivy.received.length === 1, 'm0');

    pubsub.dropConnection(ivy.connectionId);
    for (let i = 1; i <= 5; i++) await service.sendToUser('ivy', `m${i}`, { contentType: 'text/plain' });

    await waitFor(() => ivy.received.length >= 6, 'every message after the resume');
    await flush('ivy', [ivy], 'end-ivy');
    expect(ivy.received).toEqual([
      'server:m0',
      'server:m1',
      'server:m2',
      'server:m3',
      'server:m4',
      'server:m5',
      'server:end-ivy',
    ]);
    // The same session came back: no second connected event and no disconnected event.
    expect(ivy.connectedEvents).toBe(1);
    expect(ivy.disconnectedEvents).toBe(0);
  });
});

describe('the reliable subprotocol on the wire', () => {
  interface RawClient {
    socket: WebSocket;
    frames: Record<string, unknown>[];
  }

  async function openRaw(url: string): Promise<RawClient> {
    const socket = new WebSocket(url, 'json.reliable.webpubsub.azure.v1');
    rawSockets.push(socket);
    const client: RawClient = { socket, frames: [] };
    socket.on('message', (data: Buffer) =>
      client.frames.push(JSON.parse(data.toString('utf8')) as Record<string, unknown>),
    );
    await new Promise<void>((resolve, reject) => {
      socket.once('open', () => resolve());
      socket.once('error', reject);
    });
    return client;
  }

  /** Pings and waits for the pong: every frame the service sent before it has arrived by then. */
  async function settle(client: RawClient): Promise<Record<string, unknown>[]> {
    const before = client.frames.length;
    client.socket.send(JSON.stringify({ type: 'ping' }));
    await waitFor(() => client.frames.slice(before).some((f) => f['type'] === 'pong'), 'pong');
    return client.frames.filter((f) => f['type'] !== 'pong');
  }

  it('replays exactly the unacknowledged messages, including those sent while the client was away', async () => {
    const { url, baseUrl: clientBase } = await service.getClientAccessToken({ userId: 'jack' });
    const first = await openRaw(url);
    await waitFor(() => first.frames.length === 1, 'connected');
    const connected = first.frames[0]!;
    expect(connected).toMatchObject({ type: 'system', event: 'connected', userId: 'jack' });
    const connectionId = connected['connectionId'] as string;
    const reconnectionToken = connected['reconnectionToken'] as string;

    await service.sendToUser('jack', 'm1', { contentType: 'text/plain' });
    await service.sendToUser('jack', { n: 2 });
    await waitFor(() => first.frames.length === 3, 'm1 and m2');
    expect(first.frames.slice(1)).toEqual([
      { sequenceId: 1, type: 'message', from: 'server', dataType: 'text', data: 'm1' },
      { sequenceId: 2, type: 'message', from: 'server', dataType: 'json', data: { n: 2 } },
    ]);
    first.socket.send(JSON.stringify({ type: 'sequenceAck', sequenceId: 1 }));
    await settle(first);

    pubsub.dropConnection(connectionId);
    await service.sendToUser('jack', 'm3', { contentType: 'text/plain' });
    await service.sendToUser('jack', 'm4', { contentType: 'text/plain' });
    expect(pubsub.stats().connections).toBe(0);

    const refused = new WebSocket(
      `${clientBase}?awps_connection_id=${connectionId}&awps_reconnection_token=wrong`,
      'json.reliable.webpubsub.azure.v1',
    );
    rawSockets.push(refused);
    const refusedCode = await new Promise<number>((resolve) =>
      refused.once('close', (code) => resolve(code)),
    );
    expect(refusedCode).toBe(1008);

    const resumed = await openRaw(
      `${clientBase}?awps_connection_id=${connectionId}&awps_reconnection_token=${encodeURIComponent(reconnectionToken)}`,
    );
    const frames = await settle(resumed);
    expect(frames).toEqual([
      { type: 'system', event: 'connected', userId: 'jack', connectionId, reconnectionToken },
      { sequenceId: 2, type: 'message', from: 'server', dataType: 'json', data: { n: 2 } },
      { sequenceId: 3, type: 'message', from: 'server', dataType: 'text', data: 'm3' },
      { sequenceId: 4, type: 'message', from: 'server', dataType: 'text', data: 'm4' },
    ]);
  });

  it('refuses a client that offers no JSON subprotocol', async () => {
    const { url } = await service.getClientAccessToken({ userId: 'liam' });
    for (const protocols of [[], ['protobuf.webpubsub.azure.v1']]) {
      const socket = new WebSocket(url, protocols);
      rawSockets.push(socket);
      const status = await new Promise<number | undefined>((resolve) => {
        socket.once('unexpected-response', (_req, res) => resolve(res.statusCode));
        socket.once('open', () => resolve(undefined));
        socket.once('error', () => resolve(undefined));
      });
      expect(status).toBe(400);
    }
  });
});
