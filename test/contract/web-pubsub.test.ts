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
  /** Every data message, in arrival order: server messages as `server:<data>`, group ones as `<group>:<data>`. */
  received: string[];
  groupMessages: { group: string; fromUserId: string | undefined; dataType: string; data: unknown }[];
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
    groupMessages: [],
    connectedEvents: 0,
    disconnectedEvents: 0,
  };
  client.on('server-message', (e) => result.received.push(`server:${text(e.message.data)}`));
  client.on('group-message', (e) => {
    result.received.push(`${e.message.group}:${text(e.message.data)}`);
    result.groupMessages.push({
      group: e.message.group,
      fromUserId: e.message.fromUserId,
      dataType: e.message.dataType,
      data: e.message.data,
    });
  });
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
 * Sends a marker to `client` and waits for it: messages are delivered in order, so anything wrongly addressed to
 * the client before the marker would already be in `received`.
 */
async function flush(client: TestClient, marker: string): Promise<void> {
  await service.sendToConnection(client.connectionId, marker, { contentType: 'text/plain' });
  await waitFor(() => client.received.includes(`server:${marker}`), `marker ${marker}`);
}

describe('local Web PubSub with the real SDKs', () => {
  it('sends to a user, a connection and all, reaching only the addressed connections', async () => {
    const aliceReliable = await connect({ userId: 'alice' });
    const aliceJson = await connect({ userId: 'alice' }, WebPubSubJsonProtocol());
    const bob = await connect({ userId: 'bob' });

    await service.sendToUser('alice', { note: 'for alice' });
    await waitFor(
      () => aliceReliable.received.length === 1 && aliceJson.received.length === 1,
      'alice to get her message on both connections',
    );
    await service.sendToConnection(aliceJson.connectionId, 'only this one', { contentType: 'text/plain' });
    await service.sendToAll('everyone', {
      contentType: 'text/plain',
      excludedConnections: [aliceReliable.connectionId],
    });

    await flush(aliceReliable, 'end-a');
    await flush(aliceJson, 'end-b');
    await flush(bob, 'end-c');
    expect(aliceReliable.received).toEqual(['server:{"note":"for alice"}', 'server:end-a']);
    expect(aliceJson.received).toEqual([
      'server:{"note":"for alice"}',
      'server:only this one',
      'server:everyone',
      'server:end-b',
    ]);
    expect(bob.received).toEqual(['server:everyone', 'server:end-c']);
    expect(aliceReliable.connectionId).not.toBe(aliceJson.connectionId);
  });

  it('sends to a group only its members, who joined through the token claims at connect', async () => {
    const member = await connect({ userId: 'carol', groups: ['room-1'] });
    const outsider = await connect({ userId: 'dave', groups: ['room-2'] });

    expect(await service.groupExists('room-1')).toBe(true);
    const members = [];
    for await (const m of await service.group('room-1').listConnections()) members.push(m);
    expect(members).toEqual([{ connectionId: member.connectionId, userId: 'carol' }]);
    await service.group('room-1').sendToAll('hello room', { contentType: 'text/plain' });
    await service.group('room-1').sendToAll(new Uint8Array([1, 2, 3]).buffer);

    await flush(member, 'end-member');
    await flush(outsider, 'end-outsider');
    expect(member.received).toEqual(['room-1:hello room', 'room-1:bytes(1,2,3)', 'server:end-member']);
    expect(member.groupMessages.map((m) => [m.dataType, m.fromUserId])).toEqual([
      ['text', undefined],
      ['binary', undefined],
    ]);
    expect(outsider.received).toEqual(['server:end-outsider']);
  });

  it('lets a client join and publish to a group only when its token has the role', async () => {
    const plain = await connect({ userId: 'erin' });
    const joiner = await connect({
      userId: 'frank',
      roles: ['webpubsub.joinLeaveGroup.private', 'webpubsub.sendToGroup.private'],
    });

    const refused = await plain.client.joinGroup('private').catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(SendMessageError);
    expect((refused as SendMessageError).errorDetail?.name).toBe('Forbidden');
    const refusedSend = await plain.client
      .sendToGroup('private', 'psst', 'text')
      .catch((error: unknown) => error);
    expect((refusedSend as SendMessageError).errorDetail?.name).toBe('Forbidden');
    // The role names one group: it does not open another.
    const otherGroup = await joiner.client.joinGroup('other').catch((error: unknown) => error);
    expect((otherGroup as SendMessageError).errorDetail?.name).toBe('Forbidden');

    await joiner.client.joinGroup('private');
    await joiner.client.sendToGroup('private', { text: 'hi' }, 'json');
    await joiner.client.sendToGroup('private', 'not echoed', 'text', { noEcho: true });
    await service.group('private').sendToAll('from server', { contentType: 'text/plain' });

    await flush(joiner, 'end-joiner');
    await flush(plain, 'end-plain');
    expect(joiner.received).toEqual(['private:{"text":"hi"}', 'private:from server', 'server:end-joiner']);
    expect(joiner.groupMessages[0]).toMatchObject({ fromUserId: 'frank', dataType: 'json' });
    expect(plain.received).toEqual(['server:end-plain']);

    await joiner.client.leaveGroup('private');
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

  it('refuses REST calls signed with the wrong key and OData filters it does not implement', async () => {
    const forged = serviceClient(pubsub.connectionString(baseUrl).replace(ACCESS_KEY, 'some-other-key'));
    const unauthorized = await forged.sendToAll('x', { contentType: 'text/plain' }).catch((e: unknown) => e);
    expect(unauthorized).toMatchObject({ name: 'RestError', statusCode: 401 });
    await expect(forged.userExists('anyone')).rejects.toMatchObject({ statusCode: 401 });

    const filtered = await service.sendToAll('x', { filter: "userId eq 'alice'" }).catch((e: unknown) => e);
    expect(filtered).toMatchObject({
      name: 'RestError',
      statusCode: 400,
      message: expect.stringMatching(/OData filters/) as string,
    });
  });

  it('manages users, groups and connections over REST', async () => {
    const henry = await connect({ userId: 'henry' });
    expect(await service.userExists('henry')).toBe(true);
    expect(await service.connectionExists(henry.connectionId)).toBe(true);
    expect(await service.userExists('nobody')).toBe(false);

    await service.group('news').addUser('henry');
    await service.group('news').sendToAll('headline', { contentType: 'text/plain' });
    await service.removeUserFromAllGroups('henry');
    await service.group('news').sendToAll('missed', { contentType: 'text/plain' });
    await service.group('alerts').addConnection(henry.connectionId);
    await service.group('alerts').sendToAll('alert', { contentType: 'text/plain' });
    await service.group('alerts').removeConnection(henry.connectionId);
    await flush(henry, 'end-henry');
    expect(henry.received).toEqual(['news:headline', 'alerts:alert', 'server:end-henry']);
    await expect(service.group('alerts').addConnection('no-such-connection')).rejects.toMatchObject({
      statusCode: 404,
    });

    const stopped = new Promise<void>((resolve) => henry.client.on('stopped', () => resolve()));
    await service.closeUserConnections('henry', { reason: 'bye' });
    await stopped;
    expect(henry.disconnectedEvents).toBe(1);
    expect(await service.userExists('henry')).toBe(false);
  });

  it('resumes a dropped reliable connection without losing or repeating a message', async () => {
    const ivy = await connect({ userId: 'ivy' });
    await service.sendToUser('ivy', 'm0', { contentType: 'text/plain' });
    await waitFor(() => ivy.received.length === 1, 'm0');

    pubsub.dropConnection(ivy.connectionId);
    for (let i = 1; i <= 5; i++) await service.sendToUser('ivy', `m${i}`, { contentType: 'text/plain' });

    await waitFor(() => ivy.received.length >= 6, 'every message after the resume');
    await flush(ivy, 'end-ivy');
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
    expect(await service.connectionExists(ivy.connectionId)).toBe(true);
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

  it('gives a client without subprotocol the bare data frames', async () => {
    const { url } = await service.getClientAccessToken({ userId: 'liam' });
    const socket = new WebSocket(url);
    rawSockets.push(socket);
    const frames: { data: string; binary: boolean }[] = [];
    socket.on('message', (data: Buffer, binary) => frames.push({ data: data.toString('base64'), binary }));
    await new Promise<void>((resolve, reject) => {
      socket.once('open', () => resolve());
      socket.once('error', reject);
    });
    await service.sendToUser('liam', { a: 1 });
    await service.sendToUser('liam', new Uint8Array([9]).buffer);
    await waitFor(() => frames.length === 2, 'two frames');
    expect(frames).toEqual([
      { data: Buffer.from('{"a":1}').toString('base64'), binary: false },
      { data: Buffer.from([9]).toString('base64'), binary: true },
    ]);
  });

  it('answers a repeated ackId with Duplicate instead of publishing twice', async () => {
    const { url } = await service.getClientAccessToken({
      userId: 'kate',
      roles: ['webpubsub.sendToGroup'],
      groups: ['g'],
    });
    const client = await openRaw(url);
    const publish = JSON.stringify({
      type: 'sendToGroup',
      group: 'g',
      ackId: 7,
      dataType: 'text',
      data: 'once',
    });
    client.socket.send(publish);
    client.socket.send(publish);
    const frames = await settle(client);
    expect(frames.filter((f) => f['type'] === 'message').map((f) => f['data'])).toEqual(['once']);
    expect(frames.filter((f) => f['type'] === 'ack')).toEqual([
      { type: 'ack', ackId: 7, success: true },
      {
        type: 'ack',
        ackId: 7,
        success: false,
        error: { name: 'Duplicate', message: expect.any(String) as string },
      },
    ]);
  });
});
