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
  /** Every message, in arrival order, as `server:<data>` or `group <name>:<data>`. */
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
  client.on('group-message', (e) => result.received.push(`group ${e.message.group}:${text(e.message.data)}`));
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

  it("sends to a group only the connections in it, on both subprotocols: a session's events stay in that session", async () => {
    // One user, two sessions (two browser tabs), each connection joined to its session's group by its token.
    const tabA = await connect({ userId: 'alice', groups: ['session-A'] });
    const tabAJson = await connect({ userId: 'alice', groups: ['session-A'] }, WebPubSubJsonProtocol());
    const tabB = await connect({ userId: 'alice', groups: ['session-B'] });
    const stranger = await connect({ userId: 'bob' });
    expect(await service.groupExists('session-A')).toBe(true);

    await service.group('session-A').sendToAll([{ seq: 1 }, { seq: 2 }]);
    await service.group('session-B').sendToAll([{ seq: 9 }]);
    await service.group('session-A').sendToAll('end-a', { contentType: 'text/plain' });
    await service.group('session-B').sendToAll('end-b', { contentType: 'text/plain' });
    for (const client of [tabA, tabAJson]) {
      await waitFor(() => client.received.includes('group session-A:end-a'), 'the end of session A');
      expect(client.received).toEqual(['group session-A:[{"seq":1},{"seq":2}]', 'group session-A:end-a']);
    }
    await waitFor(() => tabB.received.includes('group session-B:end-b'), 'the end of session B');
    expect(tabB.received).toEqual(['group session-B:[{"seq":9}]', 'group session-B:end-b']);
    // A user-addressed send still reaches every connection of the user, and only those.
    await flush('bob', [stranger], 'end-bob');
    expect(stranger.received).toEqual(['server:end-bob']);
  });

  it('lets a client join and leave only the group its role names: another group is Forbidden, sending too', async () => {
    const tab = await connect({
      userId: 'carol',
      groups: ['session-C'],
      roles: ['webpubsub.joinLeaveGroup.session-C'],
    });
    await tab.client.leaveGroup('session-C');
    expect(await service.groupExists('session-C')).toBe(false);
    await service.group('session-C').sendToAll('while out', { contentType: 'text/plain' });
    await tab.client.joinGroup('session-C');
    await service.group('session-C').sendToAll('back in', { contentType: 'text/plain' });
    await waitFor(() => tab.received.includes('group session-C:back in'), 'the message after re-joining');
    expect(tab.received).toEqual(['group session-C:back in']);

    const refusals = [
      await tab.client.joinGroup('session-D').catch((error: unknown) => error),
      await tab.client.leaveGroup('session-D').catch((error: unknown) => error),
      await tab.client.sendToGroup('session-C', 'psst', 'text').catch((error: unknown) => error),
    ];
    for (const refused of refusals) {
      expect(refused).toBeInstanceOf(SendMessageError);
      expect((refused as SendMessageError).errorDetail?.name).toBe('Forbidden');
    }
    expect(await service.groupExists('session-D')).toBe(false);

    // A token without roles can join nothing, not even with a group claim of its own.
    const plain = await connect({ userId: 'dan' });
    const refused = await plain.client.joinGroup('session-C').catch((error: unknown) => error);
    expect((refused as SendMessageError).errorDetail?.name).toBe('Forbidden');
  });

  it('lets a token with the general role join any group, and the server add and remove connections', async () => {
    const relay = await connect({ roles: ['webpubsub.joinLeaveGroup'] });
    await relay.client.joinGroup('session-E');
    await relay.client.joinGroup('session-F');
    const viewer = await connect({ userId: 'erin' });
    await service.group('session-E').addConnection(viewer.connectionId);

    await service.group('session-E').sendToAll('e1', { contentType: 'text/plain' });
    await service.group('session-F').sendToAll('f1', { contentType: 'text/plain' });
    await waitFor(() => relay.received.length === 2 && viewer.received.length === 1, 'e1 and f1');
    expect(relay.received).toEqual(['group session-E:e1', 'group session-F:f1']);
    expect(viewer.received).toEqual(['group session-E:e1']);

    await service.group('session-E').removeConnection(viewer.connectionId);
    await relay.client.leaveGroup('session-F');
    await service.group('session-E').sendToAll('e2', { contentType: 'text/plain' });
    await service.group('session-F').sendToAll('f2', { contentType: 'text/plain' });
    await waitFor(() => relay.received.length === 3, 'e2');
    await flush('erin', [viewer], 'end-erin');
    expect(relay.received).toEqual(['group session-E:e1', 'group session-F:f1', 'group session-E:e2']);
    expect(viewer.received).toEqual(['group session-E:e1', 'server:end-erin']);
    expect(await service.groupExists('session-F')).toBe(false);

    const missing = await service
      .group('session-E')
      .addConnection('no-such-connection')
      .catch((e: unknown) => e);
    expect(missing).toMatchObject({ name: 'RestError', statusCode: 404 });
  });

  it('sends to a group except the excluded connections', async () => {
    const first = await connect({ userId: 'fay', groups: ['session-G'] });
    const second = await connect({ userId: 'fay', groups: ['session-G'] });
    await service.group('session-G').sendToAll('not for first', {
      contentType: 'text/plain',
      excludedConnections: [first.connectionId],
    });
    await service.group('session-G').sendToAll('for both', { contentType: 'text/plain' });
    await waitFor(() => first.received.length === 1 && second.received.length === 2, 'the messages');
    expect(first.received).toEqual(['group session-G:for both']);
    expect(second.received).toEqual(['group session-G:not for first', 'group session-G:for both']);
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
      message: expect.stringMatching(/sendToUser, sendToGroup, .* and groupExists only/) as string,
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

  it('keeps a resumed reliable connection in its groups, with the group messages sent while it was away', async () => {
    const tab = await connect({ userId: 'ivan', groups: ['session-H'] });
    pubsub.dropConnection(tab.connectionId);
    await service.group('session-H').sendToAll('h1', { contentType: 'text/plain' });
    await waitFor(() => tab.received.length === 1, 'h1 after the resume');
    await service.group('session-H').sendToAll('h2', { contentType: 'text/plain' });
    await waitFor(() => tab.received.length === 2, 'h2');
    expect(tab.received).toEqual(['group session-H:h1', 'group session-H:h2']);
    expect(tab.connectedEvents).toBe(1);
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

  it('frames group messages and join/leave acks as the service does', async () => {
    const { url } = await service.getClientAccessToken({
      userId: 'kim',
      groups: ['session-K'],
      roles: ['webpubsub.joinLeaveGroup.session-K'],
    });
    const raw = await openRaw(url);
    await waitFor(() => raw.frames.length === 1, 'connected');
    await service.group('session-K').sendToAll([{ seq: 1 }]);
    raw.socket.send(JSON.stringify({ type: 'leaveGroup', group: 'session-K', ackId: 7 }));
    raw.socket.send(JSON.stringify({ type: 'joinGroup', group: 'session-L', ackId: 8 }));
    const frames = await settle(raw);
    expect(frames.slice(1)).toEqual([
      {
        sequenceId: 1,
        type: 'message',
        from: 'group',
        group: 'session-K',
        dataType: 'json',
        data: [{ seq: 1 }],
      },
      { type: 'ack', ackId: 7, success: true },
      {
        type: 'ack',
        ackId: 8,
        success: false,
        error: { name: 'Forbidden', message: expect.stringContaining('webpubsub.joinLeaveGroup') as string },
      },
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
