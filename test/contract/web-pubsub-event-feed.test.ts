// Contract test of the Web PubSub event feed against the local Web PubSub with the real SDKs: one shared
// connection per process, batches reaching only their session's followers, and the SSE relay on top.
import type { WebPubSubServiceClient } from '@azure/web-pubsub';
import { createParser } from 'eventsource-parser';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { LocalWebPubSub } from '../../local/web-pubsub/local-web-pubsub.js';
import { sessionGroup, type ChatEvent } from '../../shared/streaming/contracts.js';
import { DependencyError } from '../../shared/errors.js';
import type { TurnEventStore } from '../../shared/streaming/turn-event-store.js';
import type { FeedSubscription } from '../../shared/streaming/user-event-feed.js';
import { relayTurnEvents } from '../../shared/streaming/turn-event-relay.js';
import {
  createWebPubSubEventFeed,
  type WebPubSubEventFeed,
} from '../../shared/streaming/adapters/web-pubsub-event-feed.js';
import { createWebPubSubEventSink } from '../../shared/streaming/adapters/web-pubsub-event-sink.js';
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
const feeds: WebPubSubEventFeed[] = [];

beforeAll(async () => {
  webPubSubServer = await startWebPubSubServer({ reconnectGraceMs: 5_000 });
  ({ pubsub, baseUrl } = webPubSubServer);
  service = serviceClient(webPubSubServer.connectionString);
});

afterEach(async () => {
  await Promise.all(feeds.splice(0).map((feed) => feed.close()));
});

afterAll(async () => {
  await webPubSubServer?.close();
});

const serviceClient = (connectionString: string) => testServiceClient(connectionString);

/** A feed that closes its shared connection as soon as it follows no session, closed after each test. */
function newFeed(on: WebPubSubServiceClient = service): WebPubSubEventFeed {
  const feed = createWebPubSubEventFeed(on, {
    idleDisconnectMs: 0,
    client: { reconnectRetryOptions: { retryDelayInMs: 20 } },
  });
  feeds.push(feed);
  return feed;
}

/** Subscribes to a session through `feed` and records what reaches onEvent. */
async function listen(
  feed: WebPubSubEventFeed,
  sessionId: string,
  userId = 'alice',
): Promise<{ received: ChatEvent[]; subscription: FeedSubscription }> {
  const received: ChatEvent[] = [];
  const subscription = await feed.subscribe({ userId, sessionId }, (e) => received.push(e));
  return { received, subscription };
}

const sink = () => createWebPubSubEventSink(service);

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

async function waitFor(
  condition: () => boolean | Promise<boolean>,
  what: string,
  timeoutMs = 5_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
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
  it("follows every session on ONE shared connection, and hands each session's batches to its own relays", async () => {
    const feed = newFeed();
    const a1 = await listen(feed, 'session-a');
    const a2 = await listen(feed, 'session-a');
    const b = await listen(feed, 'session-b');
    expect(pubsub.stats().connections).toBe(1);
    expect(feed.followedSessions).toBe(2);

    const eventsA = turn(6, 'session-a');
    const eventsB = turn(3, 'session-b');
    await sink().send({ userId: 'alice', sessionId: 'session-a' }, eventsA.slice(0, 4));
    await sink().send({ userId: 'alice', sessionId: 'session-b' }, eventsB);
    await sink().send({ userId: 'alice', sessionId: 'session-a' }, eventsA.slice(4));

    await waitFor(() => a1.received.length === 6 && a2.received.length === 6, "session a's events");
    await waitFor(() => b.received.length === 3, "session b's events");
    expect(a1.received).toEqual(eventsA);
    expect(a2.received).toEqual(eventsA);
    expect(b.received).toEqual(eventsB);
  });

  it('stays in a group while one relay follows it, leaves it with the last, and then closes the connection', async () => {
    const feed = newFeed();
    const first = await listen(feed, 'session-c');
    const second = await listen(feed, 'session-c');
    const [one, two, three] = turn(3, 'session-c');
    await sink().send({ userId: 'alice', sessionId: 'session-c' }, [one!]);
    await waitFor(() => first.received.length === 1 && second.received.length === 1, 'the first event');

    await first.subscription.close();
    expect(await service.groupExists(sessionGroup('session-c'))).toBe(true);
    await sink().send({ userId: 'alice', sessionId: 'session-c' }, [two!]);
    await waitFor(() => second.received.length === 2, 'the second event on the open subscription');
    expect(first.received).toEqual([one]);

    await second.subscription.close();
    expect(await service.groupExists(sessionGroup('session-c'))).toBe(false);
    expect(feed.followedSessions).toBe(0);
    await waitFor(() => pubsub.stats().connections === 0, 'the idle connection to close');

    // A new subscription opens a new connection and joins again.
    const third = await listen(feed, 'session-c');
    await sink().send({ userId: 'alice', sessionId: 'session-c' }, [three!]);
    await waitFor(() => third.received.length === 1, 'the third event');
    expect(third.received).toEqual([three]);
    expect(pubsub.stats().connections).toBe(1);
  });

  it('keeps following a session when a stream closes and another opens at the same moment (a reconnect)', async () => {
    const feed = newFeed();
    const leaving = await listen(feed, 'session-r');
    const closing = leaving.subscription.close();
    const arriving = await listen(feed, 'session-r');
    await closing;
    expect(feed.followedSessions).toBe(1);
    const [event] = turn(1, 'session-r');
    await sink().send({ userId: 'alice', sessionId: 'session-r' }, [event!]);
    await waitFor(() => arriving.received.length === 1, 'the event on the new stream');
    expect(leaving.received).toEqual([]);
  });

  it('passes on only chat events of the followed session, from batches (JSON arrays)', async () => {
    const feed = newFeed();
    const d = await listen(feed, 'session-d');
    const [first, second, third] = turn(3, 'session-d');
    const group = service.group(sessionGroup('session-d'));

    await group.sendToAll(first!);
    await group.sendToAll('plain text', { contentType: 'text/plain' });
    await group.sendToAll({ note: 'not a batch' });
    await group.sendToAll([{ ...first!, seq: '1' }, { ...first!, type: 'made-up' }, second]);
    await group.sendToAll([{ ...third!, sessionId: 'session-other' }]);
    await group.sendToAll(new Uint8Array([1, 2]).buffer);
    await group.sendToAll([third]);

    // Messages arrive in order: once the last one is in, anything wrongly delivered before it would be too.
    await waitFor(() => d.received.some((e) => e.seq === 3), 'the last event');
    expect(d.received).toEqual([second, third]);
  });

  it('re-joins its groups after the service loses its connection, and goes on delivering', async () => {
    const feed = newFeed();
    const e = await listen(feed, 'session-e');
    const f = await listen(feed, 'session-f');
    const [one, two] = turn(2, 'session-e');
    const [other] = turn(1, 'session-f');

    // First a drop the reliable protocol resumes (same connection), then a connection the service has forgotten.
    const connectionId = await onlyConnection();
    pubsub.dropConnection(connectionId);
    await sink().send({ userId: 'alice', sessionId: 'session-e' }, [one!]);
    await waitFor(() => e.received.length === 1, 'the event sent while the connection was resuming');

    const resumed = await onlyConnection();
    expect(resumed).toBe(connectionId);
    await service.closeConnection(resumed, { reason: 'forgotten' });
    await waitFor(() => feed.followedSessions === 2 && pubsub.stats().connections === 1, 'a new connection');
    await waitFor(
      async () =>
        (await service.groupExists(sessionGroup('session-e'))) &&
        (await service.groupExists(sessionGroup('session-f'))),
      'the groups to be joined again',
    );
    expect(await onlyConnection()).not.toBe(connectionId);
    await sink().send({ userId: 'alice', sessionId: 'session-e' }, [two!]);
    await sink().send({ userId: 'alice', sessionId: 'session-f' }, [other!]);
    await waitFor(() => e.received.length === 2 && f.received.length === 1, 'the events after re-joining');
    expect(e.received).toEqual([one, two]);
    expect(f.received).toEqual([other]);
  });

  it('fails with a DependencyError when the service refuses the connection', async () => {
    const forged = serviceClient(pubsub.connectionString(baseUrl).replace(ACCESS_KEY, 'some-other-key'));
    const error = await newFeed(forged)
      .subscribe({ userId: 'erin', sessionId: 'session-g' }, () => undefined)
      .catch((e: unknown) => e);

    expect(error).toBeInstanceOf(DependencyError);
    expect(error).toMatchObject({ dependency: 'webPubSub', status: 503 });
    expect((error as Error).message).toMatch(/session-g/);
  });
});

/** The id of the one client connection the service holds. */
async function onlyConnection(): Promise<string> {
  await waitFor(() => pubsub.stats().connections === 1, 'one connection');
  const [id] = pubsub.connectionIds();
  if (id === undefined) throw new Error('no connection');
  return id;
}

describe('relayTurnEvents over the Web PubSub feed and sink', () => {
  /**
   * Runs a writer of 20 events (batches of 1 to 3) alongside the relay, with another turn of the session and a turn
   * of another session sent in between, and checks the SSE text holds exactly the relayed turn.
   */
  async function relayWhileWriting(
    write: (store: TurnEventStore, batch: ChatEvent[]) => Promise<void>,
  ): Promise<void> {
    const store = new MemoryTurnEventStore();
    const errors: unknown[] = [];
    const events = turn(20, 'session-e2e', 'turn-e2e');
    const otherTurn = turn(20, 'session-e2e', 'turn-other');
    const otherSession = turn(20, 'session-elsewhere', 'turn-e2e');
    const stream = relayTurnEvents({
      userId: 'frank',
      sessionId: 'session-e2e',
      chatMessageId: 'turn-e2e',
      afterSeq: 0,
      store,
      feed: newFeed(),
      idleTimeoutMs: 10_000,
      onError: (error) => errors.push(error),
    });
    const text = new Response(stream).text();

    for (let i = 0, size = 1; i < events.length; i += size, size = (size % 3) + 1) {
      await write(store, events.slice(i, i + size));
      await sink().send({ userId: 'frank', sessionId: 'session-e2e' }, otherTurn.slice(i, i + size));
      await sink().send({ userId: 'frank', sessionId: 'session-elsewhere' }, otherSession.slice(i, i + size));
      if (i % 4 === 0) await new Promise((resolve) => setTimeout(resolve, 5));
    }

    const relayed: { id: string | undefined; event: string | undefined; data: ChatEvent }[] = [];
    createParser({
      onEvent: (m) => relayed.push({ id: m.id, event: m.event, data: JSON.parse(m.data) as ChatEvent }),
    }).feed(await text);
    expect(relayed).toEqual(events.map((e) => ({ id: String(e.seq), event: e.type, data: e })));
    expect(errors).toEqual([]);
    await waitFor(() => pubsub.stats().connections === 0, 'the feed to close its idle connection');
  }

  it('relays exactly the 20 events, in order, of a writer that stores each batch, then sends it', async () => {
    await relayWhileWriting(async (store, batch) => {
      await store.append(batch);
      await sink().send({ userId: 'frank', sessionId: 'session-e2e' }, batch);
    });
  });

  it('relays exactly the 20 events, in order, of a writer that sends and stores concurrently', async () => {
    await relayWhileWriting(async (store, batch) => {
      await Promise.all([
        sink().send({ userId: 'frank', sessionId: 'session-e2e' }, batch),
        new Promise((resolve) => setTimeout(resolve, 3)).then(() => store.append(batch)),
      ]);
    });
  });
});
