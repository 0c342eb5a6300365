// Contract tests of the turn event adapters with the real SDKs: the Cosmos DB store against the local Cosmos
// server (idempotent append, ordered reads after a seq, isolation between turns and sessions), and a
// TurnStream writing through that store and the Web PubSub sink to a client that follows the session.
import type { Container, CosmosClient } from '@azure/cosmos';
import type { WebPubSubServiceClient } from '@azure/web-pubsub';
import { WebPubSubClient, WebPubSubJsonReliableProtocol } from '@azure/web-pubsub-client';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  createLocalCosmosClient,
  provisionCosmos,
  startLocalCosmos,
  type LocalCosmos,
} from '../../local/cosmos/local-cosmos.js';
import { sessionGroup, type ChatEvent } from '../../shared/streaming/contracts.js';
import { COSMOS_DATABASE, cosmosContainers } from '../../shared/app/cosmos-containers.js';
import { TURN_EVENTS_CONTAINER } from '../../shared/streaming/contracts.js';
import { DependencyError } from '../../shared/errors.js';
import { createCosmosTurnEventStore } from '../../shared/streaming/adapters/cosmos-turn-event-store.js';
import { EventSeqTakenError, type TurnEventStore } from '../../shared/streaming/turn-event-store.js';
import { TurnStream } from '../../shared/streaming/turn-stream.js';
import { createWebPubSubEventSink } from '../../shared/streaming/adapters/web-pubsub-event-sink.js';
import {
  startWebPubSubServer,
  testServiceClient,
  type WebPubSubTestServer,
} from '../support/web-pubsub-server.js';

let cosmos: LocalCosmos;
let cosmosClient: CosmosClient;
let container: Container;
let store: TurnEventStore;

beforeAll(async () => {
  cosmos = await startLocalCosmos();
  cosmosClient = createLocalCosmosClient(cosmos);
  await provisionCosmos(cosmosClient, COSMOS_DATABASE, cosmosContainers);
  container = cosmosClient.database(COSMOS_DATABASE).container(TURN_EVENTS_CONTAINER);
  store = createCosmosTurnEventStore(container);
});

afterAll(async () => {
  cosmosClient?.dispose();
  await cosmos?.stop();
});

/** Content events seq `from`..`to` of one turn. */
function contentEvents(sessionId: string, chatMessageId: string, from: number, to: number): ChatEvent[] {
  return Array.from({ length: to - from + 1 }, (_, i) => ({
    type: 'content',
    delta: `piece ${from + i}`,
    sessionId,
    chatMessageId,
    seq: from + i,
  }));
}

async function documentCount(sessionId: string): Promise<number> {
  const { resources } = await container.items
    .query<number>(
      {
        query: 'SELECT VALUE COUNT(1) FROM c WHERE c.sessionId = @s',
        parameters: [{ name: '@s', value: sessionId }],
      },
      { partitionKey: sessionId },
    )
    .fetchAll();
  return resources[0] ?? 0;
}

describe('the Cosmos DB turn event store', () => {
  it('stores a batch as one document, once, however often the same batch is appended', async () => {
    const events: ChatEvent[] = [
      {
        type: 'message-start',
        userMessageId: 'u-1',
        assistantMessageId: 'a-1',
        sessionId: 's-once',
        chatMessageId: 'm-1',
        seq: 1,
      },
      ...contentEvents('s-once', 'm-1', 2, 4),
      { type: 'message-end', finishReason: 'stop', sessionId: 's-once', chatMessageId: 'm-1', seq: 5 },
    ];
    expect(await store.append(events)).toBe('stored');
    expect(await store.append(events)).toBe('already-stored');

    expect(await store.read('s-once', 'm-1', 0)).toEqual(events);
    expect(await documentCount('s-once')).toBe(1);
  });

  it('never lets a seq take other content: a different batch from a stored first seq is refused', async () => {
    const first = contentEvents('s-taken', 'm-1', 1, 3);
    await store.append(first);
    const rival = first.map((event) => ({ ...event, delta: 'other text' }));
    await expect(store.append(rival)).rejects.toBeInstanceOf(EventSeqTakenError);
    await expect(store.append(first.slice(0, 2))).rejects.toBeInstanceOf(EventSeqTakenError);
    expect(await store.read('s-taken', 'm-1', 0)).toEqual(first);
  });

  it('refuses a batch that mixes turns or skips a seq, storing nothing', async () => {
    const gap = [...contentEvents('s-gap', 'm-1', 1, 1), ...contentEvents('s-gap', 'm-1', 3, 3)];
    await expect(store.append(gap)).rejects.toThrow(/contiguous/);
    const mixed = [...contentEvents('s-gap', 'm-1', 1, 1), ...contentEvents('s-gap', 'm-2', 2, 2)];
    await expect(store.append(mixed)).rejects.toThrow(/contiguous/);
    expect(await documentCount('s-gap')).toBe(0);
  });

  it('reads only the events after a seq, including from the middle of a batch', async () => {
    const events = contentEvents('s-after', 'm-1', 1, 6);
    await store.append(events.slice(0, 3));
    await store.append(events.slice(3));

    expect(await store.read('s-after', 'm-1', 4)).toEqual(events.slice(4));
    expect(await store.read('s-after', 'm-1', 2)).toEqual(events.slice(2));
    expect(await store.read('s-after', 'a-1', 6)).toEqual([]);
  });

  it('returns events in numeric seq order, whatever order their batches were written in', async () => {
    const events = contentEvents('s-order', 'm-1', 1, 120);
    for (let from = 110; from >= 0; from -= 10) await store.append(events.slice(from, from + 10));

    expect((await store.read('s-order', 'm-1', 0)).map((e) => e.seq)).toEqual(events.map((e) => e.seq));
    expect(await store.read('s-order', 'm-1', 9)).toEqual(events.slice(9));
  });

  it('keeps turns and sessions apart', async () => {
    const mine = contentEvents('s-a', 'm-1', 1, 3);
    const otherTurn = contentEvents('s-a', 'm-2', 1, 3);
    const otherSession = contentEvents('s-b', 'm-1', 1, 3);
    for (const batch of [mine, otherTurn, otherSession]) await store.append(batch);

    expect(await store.read('s-a', 'm-1', 0)).toEqual(mine);
    expect(await store.read('s-a', 'm-2', 0)).toEqual(otherTurn);
    expect(await store.read('s-b', 'm-1', 0)).toEqual(otherSession);
    expect(await store.read('s-c', 'm-1', 0)).toEqual([]);
  });

  it('refuses a stored event that breaks the event contract, rather than relay it', async () => {
    await container.items.upsert({
      id: 'm-bad:00000001',
      sessionId: 's-bad',
      chatMessageId: 'm-bad',
      firstSeq: 1,
      lastSeq: 1,
      events: [{ type: 'content', sessionId: 's-bad', chatMessageId: 'm-bad', seq: 1 }],
    });
    await expect(store.read('s-bad', 'm-bad', 0)).rejects.toMatchObject({
      constructor: DependencyError,
      message: expect.stringMatching(/events of turn 'm-bad' this version does not read/) as unknown,
    });
  });

  it('reports a failing database as a DependencyError', async () => {
    const missing = createCosmosTurnEventStore(
      cosmosClient.database(COSMOS_DATABASE).container('no-such-container'),
    );
    await expect(missing.append(contentEvents('s-x', 'm-1', 1, 1))).rejects.toMatchObject({
      constructor: DependencyError,
      dependency: 'cosmos',
    });
    await expect(missing.read('s-x', 'm-1', 0)).rejects.toMatchObject({
      constructor: DependencyError,
      dependency: 'cosmos',
    });
  });
});

describe('a turn stream through the Cosmos DB store and the Web PubSub sink', () => {
  let webPubSubServer: WebPubSubTestServer;
  let service: WebPubSubServiceClient;
  const clients: WebPubSubClient[] = [];

  beforeAll(async () => {
    webPubSubServer = await startWebPubSubServer();
    service = testServiceClient(webPubSubServer.connectionString);
  });

  afterEach(() => {
    for (const client of clients.splice(0)) client.stop();
  });

  afterAll(async () => {
    await webPubSubServer?.close();
  });

  /** Connects as `userId` following `sessionId`; `received` collects the data of every message, in arrival order. */
  async function connect(
    userId: string,
    sessionId: string,
  ): Promise<{ connectionId: string; received: unknown[] }> {
    const { url } = await service.getClientAccessToken({ userId, groups: [sessionGroup(sessionId)] });
    const client = new WebPubSubClient(url, {
      protocol: WebPubSubJsonReliableProtocol(),
      autoReconnect: false,
      messageRetryOptions: { maxRetries: 0 },
    });
    clients.push(client);
    const received: unknown[] = [];
    client.on('server-message', (e) => received.push(e.message.data));
    client.on('group-message', (e) => received.push(e.message.data));
    const connected = new Promise<string>((resolve) =>
      client.on('connected', (e) => resolve(e.connectionId)),
    );
    await client.start();
    return { connectionId: await connected, received };
  }

  async function waitFor(condition: () => boolean, what: string): Promise<void> {
    const deadline = Date.now() + 5_000;
    while (!condition()) {
      if (Date.now() > deadline) throw new Error(`Timed out waiting for ${what}`);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  }

  it("delivers to the session's followers exactly the stored events, in order, and nothing to another session", async () => {
    const alice = await connect('alice', 's-live');
    const otherTab = await connect('alice', 's-other');
    // A long interval: text is coalesced by size and by the other events only, so the cut is deterministic.
    const stream = new TurnStream({
      userId: 'alice',
      sessionId: 's-live',
      chatMessageId: 'm-live',
      firstSeq: 1,
      store,
      sink: createWebPubSubEventSink(service),
      coalescing: { flushIntervalMs: 60_000, flushMaxChars: 12 },
    });
    stream.emit({ type: 'message-start', userMessageId: 'u-live', assistantMessageId: 'a-live' });
    for (const delta of 'Let me look that up for you.'.split(/(?= )/))
      stream.emit({ type: 'content', delta });
    stream.emit({ type: 'tool-call', round: 1, toolCallId: 'c1', name: 'search', arguments: '{"q":"x"}' });
    stream.emit({
      type: 'tool-result',
      round: 1,
      toolCallId: 'c1',
      name: 'search',
      result: 'found',
      isError: false,
    });
    for (const delta of ['It ', 'is ', 'here.']) stream.emit({ type: 'content', delta });
    stream.emit({ type: 'message-end', finishReason: 'stop' });
    await stream.close();

    const stored = await store.read('s-live', 'm-live', 0);
    expect(stored).toEqual(stream.emitted);
    expect(stored.map((e) => e.seq)).toEqual(stored.map((_, i) => i + 1));
    expect(stored.length).toBeLessThan(2 + 7 + 2 + 3);
    expect(
      stored
        .filter((e) => e.type === 'content')
        .map((e) => e.delta)
        .join(''),
    ).toBe('Let me look that up for you.It is here.');

    // Messages to a connection arrive in order: once a marker sent now has arrived, so has everything before it.
    for (const [group, client] of [
      ['s-live', alice],
      ['s-other', otherTab],
    ] as const) {
      await service.group(sessionGroup(group)).sendToAll('marker', { contentType: 'text/plain' });
      await waitFor(() => client.received.includes('marker'), 'the marker');
    }
    // Each message is one batch of the stream, a JSON array; together they are the stored events.
    const batches = alice.received.slice(0, -1) as ChatEvent[][];
    expect(batches.every((batch) => Array.isArray(batch) && batch.length > 0)).toBe(true);
    expect(batches.flat()).toEqual(stored);
    expect(alice.received.at(-1)).toBe('marker');
    expect(otherTab.received).toEqual(['marker']);
  });
});
