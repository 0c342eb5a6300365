// Contract test of the Web PubSub event feed against the local Web PubSub, through the real
// @azure/web-pubsub server SDK and @azure/web-pubsub-client; and the SSE relay end to end on top of it.
import type { WebPubSubServiceClient } from '@azure/web-pubsub';
import { createParser } from 'eventsource-parser';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { LocalWebPubSub } from '../../local/web-pubsub/local-web-pubsub.js';
import type { ChatEvent } from '../../shared/streaming/contracts.js';
import { DependencyError } from '../../shared/errors.js';
import type { TurnEventStore } from '../../shared/streaming/turn-event-store.js';
import type { FeedSubscription } from '../../shared/streaming/user-event-feed.js';
import { relayTurnEvents } from '../../shared/streaming/turn-event-relay.js';
import { createWebPubSubEventFeed } from '../../shared/streaming/adapters/web-pubsub-event-feed.js';
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
const subscriptions: FeedSubscription[] = [];

beforeAll(async () => {
  webPubSubServer = await startWebPubSubServer({ reconnectGraceMs: 5_000 });
  ({ pubsub, baseUrl } = webPubSubServer);
  service = serviceClient(webPubSubServer.connectionString);
});

afterEach(async () => {
  await Promise.all(subscriptions.splice(0).map((s) => s.close()));
});

afterAll(async () => {
  await webPubSubServer?.close();
});

const serviceClient = (connectionString: string) => testServiceClient(connectionString);

/** Subscribes through a fresh feed and records what reaches onEvent. */
async function listen(userId: string): Promise<{ received: ChatEvent[]; subscription: FeedSubscription }> {
  const received: ChatEvent[] = [];
  const subscription = await createWebPubSubEventFeed(service).subscribe(userId, (e) => received.push(e));
  subscriptions.push(subscription);
  return { received, subscription };
}

/** A turn of `length` events: message-start, content deltas, message-end. */
function turn(length: number, sessionId = 'session-1', chatMessageId = 'turn-1'): ChatEvent[] {
  return Array.from({ length }, (_, i): ChatEvent => {
    const seq = i + 1;
    const base = { sessionId, chatMessageId, seq };
    if (seq === 1) return { ...base, type: 'message-start', userMessageId: 'u1', assistantMessageId: 'a1' };
    if (seq === length) return { ...base, type: 'message-end', finishReason: 'stop' };
    return { ...base, type: 'content', delta: `δ${seq} ` };
  });
}

async function waitFor(condition: () => boolean, what: string, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`Timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

class MemoryTurnEventStore implements TurnEventStore {
  private readonly events = new Map<string, ChatEvent>();

  append(events: readonly ChatEvent[]): Promise<'stored'> {
    for (const e of events) {
      const key = `${e.sessionId}/${e.chatMessageId}/${e.seq}`;
      if (!this.events.has(key)) this.events.set(key, e);
    }
    return Promise.resolve('stored');
  }

  read(sessionId: string, chatMessageId: string, afterSeq: number): Promise<ChatEvent[]> {
    const found = [...this.events.values()]
      .filter((e) => e.sessionId === sessionId && e.chatMessageId === chatMessageId && e.seq > afterSeq)
      .sort((a, b) => a.seq - b.seq);
    return Promise.resolve(found);
  }
}

describe('createWebPubSubEventFeed', () => {
  it('connects over ws:// to the loopback service and delivers the events sent to the user, in order', async () => {
    const { url } = await service.getClientAccessToken({ userId: 'alice' });
    expect(url).toMatch(/^ws:\/\/127\.0\.0\.1:\d+\/webpubsub\/client\/hubs\/chat\?access_token=/);

    const alice = await listen('alice');
    const events = turn(6);
    for (const event of events) await service.sendToUser('alice', event);

    await waitFor(() => alice.received.length === events.length, 'every event');
    expect(alice.received).toEqual(events);
  });

  it("does not deliver another user's events, nor messages that are not chat events", async () => {
    const bob = await listen('bob');
    const carol = await listen('carol');
    const [first, second] = turn(2);

    await service.sendToUser('carol', first!);
    await service.sendToUser('bob', 'plain text', { contentType: 'text/plain' });
    await service.sendToUser('bob', { note: 'not an event' });
    await service.sendToUser('bob', { ...first!, seq: '1' });
    await service.sendToUser('bob', { ...first!, seq: 1.5 });
    await service.sendToUser('bob', { ...first!, type: 'made-up' });
    await service.sendToUser('bob', { ...first!, sessionId: 42 });
    await service.sendToUser('bob', [first]);
    await service.sendToUser('bob', new Uint8Array([1, 2]).buffer);
    await service.sendToUser('bob', JSON.stringify(first), { contentType: 'text/plain' });
    await service.sendToUser('bob', second!);

    // Messages arrive in order: once the last one is in, anything wrongly delivered before it would be too.
    await waitFor(() => bob.received.length > 0 && carol.received.length > 0, 'the real events');
    expect(bob.received).toEqual([second]);
    expect(carol.received).toEqual([first]);
  });

  it('stops delivering, and disconnects, once closed', async () => {
    const before = pubsub.stats().connections;
    const closing = await listen('dave');
    const staying = await listen('dave');
    expect(pubsub.stats().connections).toBe(before + 2);
    const [first, second] = turn(2);
    await service.sendToUser('dave', first!);
    await waitFor(() => closing.received.length === 1 && staying.received.length === 1, 'the first event');

    await closing.subscription.close();
    expect(pubsub.stats().connections).toBe(before + 1);
    await service.sendToUser('dave', second!);

    await waitFor(() => staying.received.length === 2, 'the second event on the open subscription');
    expect(closing.received).toEqual([first]);
  });

  it('fails with a DependencyError when the service refuses the connection', async () => {
    const forged = serviceClient(pubsub.connectionString(baseUrl).replace(ACCESS_KEY, 'some-other-key'));
    const error = await createWebPubSubEventFeed(forged)
      .subscribe('erin', () => undefined)
      .catch((e: unknown) => e);

    expect(error).toBeInstanceOf(DependencyError);
    expect(error).toMatchObject({ dependency: 'webPubSub', status: 503 });
    expect((error as Error).message).toMatch(/erin/);
  });
});

describe('relayTurnEvents over the Web PubSub feed', () => {
  /** Runs a writer of 20 events alongside the relay and returns the events the SSE text holds. */
  async function relayWhileWriting(write: (store: TurnEventStore, event: ChatEvent) => Promise<void>) {
    const store = new MemoryTurnEventStore();
    const errors: unknown[] = [];
    const events = turn(20, 'session-e2e', 'turn-e2e');
    const otherTurn = turn(20, 'session-e2e', 'turn-other');
    const stream = relayTurnEvents({
      userId: 'frank',
      sessionId: 'session-e2e',
      chatMessageId: 'turn-e2e',
      afterSeq: 0,
      store,
      feed: createWebPubSubEventFeed(service),
      idleTimeoutMs: 10_000,
      onError: (error) => errors.push(error),
    });
    const text = new Response(stream).text();

    for (const [i, event] of events.entries()) {
      await write(store, event);
      await service.sendToUser('frank', otherTurn[i]!);
      if (i % 4 === 0) await new Promise((resolve) => setTimeout(resolve, 5));
    }

    const relayed: { id: string | undefined; event: string | undefined; data: ChatEvent }[] = [];
    createParser({
      onEvent: (m) => relayed.push({ id: m.id, event: m.event, data: JSON.parse(m.data) as ChatEvent }),
    }).feed(await text);
    expect(relayed).toEqual(events.map((e) => ({ id: String(e.seq), event: e.type, data: e })));
    expect(errors).toEqual([]);
    await waitFor(() => pubsub.stats().connections === 0, 'the relay to close its connection');
  }

  it('relays exactly the 20 events, in order, of a writer that stores then sends', async () => {
    await relayWhileWriting(async (store, event) => {
      await store.append([event]);
      await service.sendToUser('frank', event);
    });
  });

  it('relays exactly the 20 events, in order, of a writer that sends and stores concurrently', async () => {
    await relayWhileWriting(async (store, event) => {
      await Promise.all([
        service.sendToUser('frank', event),
        new Promise((resolve) => setTimeout(resolve, 3)).then(() => store.append([event])),
      ]);
    });
  });
});
