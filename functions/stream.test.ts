// GET /api/realtime/negotiate and GET /api/stream/{sessionId}/{chatMessageId} in process: real HttpRequest
// objects, the real SSE relay over an in-memory event store and feed.
import { randomUUID } from 'node:crypto';
import { createParser } from 'eventsource-parser';
import { beforeEach, describe, expect, it } from 'vitest';
import type { ChatEvent } from '../shared/streaming/contracts.js';
import { asUser, callEndpoint } from '../test/support/call-endpoint.js';
import { createTestApp, type TestApp } from '../test/support/in-memory-ports.js';
import { negotiateEndpoint, streamTurnEndpoint } from './stream.js';

let app: TestApp;
beforeEach(() => {
  app = createTestApp();
});

describe('GET /api/realtime/negotiate', () => {
  const negotiate = (user: string | undefined, query: string) =>
    callEndpoint(negotiateEndpoint, app, {
      ...(user === undefined ? {} : { headers: asUser(user) }),
      path: `/api/realtime/negotiate${query}`,
    });

  it("gives the caller a client URL that follows one of its own sessions, and nobody's else (404)", async () => {
    const { sessionId } = await app.fakes.sessions.create('user_002');
    const reply = await negotiate('user_002', `?sessionId=${sessionId}`);
    expect(reply.status).toBe(200);
    expect(reply.headers.get('cache-control')).toBe('no-store');
    expect(await reply.json()).toEqual({
      url: `ws://web-pubsub.test/client/hubs/chat?user=user_002&session=${sessionId}`,
      expiresAt: '2026-11-22T11:00:00.000Z',
    });

    // Another user's session is answered exactly like one that does not exist.
    const theirs = await negotiate('user_001', `?sessionId=${sessionId}`);
    const unknown = await negotiate('user_001', `?sessionId=${randomUUID()}`);
    for (const refused of [theirs, unknown]) {
      expect(refused.status).toBe(404);
      expect(await refused.json()).toMatchObject({ code: 'not_found' });
    }
  });

  it('requires a session id (400), the caller (401), and refuses to name another user (403)', async () => {
    const missing = await negotiate('user_002', '');
    expect(missing.status).toBe(400);
    expect(await missing.json()).toMatchObject({ code: 'validation_failed' });
    expect((await negotiate('user_002', '?sessionId=not-a-uuid')).status).toBe(400);
    expect((await negotiate(undefined, `?sessionId=${randomUUID()}`)).status).toBe(401);
    expect((await negotiate('user_002', `?sessionId=${randomUUID()}&userId=user_001`)).status).toBe(403);
  });
});

describe('GET /api/stream/{sessionId}/{chatMessageId}', () => {
  let sessionId: string;
  const chatMessageId = randomUUID();
  const event = (seq: number, body: Partial<ChatEvent> & Pick<ChatEvent, 'type'>): ChatEvent =>
    ({ sessionId, chatMessageId, seq, ...body }) as ChatEvent;
  const turn = (): ChatEvent[] => [
    event(1, { type: 'message-start', userMessageId: 'u', assistantMessageId: 'a' }),
    event(2, { type: 'content', delta: 'Hello ' }),
    event(3, { type: 'content', delta: 'there.' }),
    event(4, { type: 'message-end', finishReason: 'stop' }),
  ];
  const open = (headers: Record<string, string> = {}, path?: string) =>
    callEndpoint(streamTurnEndpoint, app, {
      headers: asUser('user_001', headers),
      params: { sessionId, chatMessageId },
      ...(path === undefined ? {} : { path }),
    });

  /** The frames of an SSE body, read to its end. */
  async function frames(
    body: ReadableStream<Uint8Array> | null,
  ): Promise<{ id: string | undefined; event: string | undefined; data: ChatEvent }[]> {
    const parsed: { id: string | undefined; event: string | undefined; data: ChatEvent }[] = [];
    const parser = createParser({
      onEvent: (message) =>
        parsed.push({ id: message.id, event: message.event, data: JSON.parse(message.data) as ChatEvent }),
    });
    const decoder = new TextDecoder();
    for await (const chunk of body as unknown as AsyncIterable<Uint8Array>)
      parser.feed(decoder.decode(chunk, { stream: true }));
    return parsed;
  }

  beforeEach(async () => {
    sessionId = (await app.fakes.sessions.create('user_001')).sessionId;
  });

  it('relays a finished turn as SSE frames, id = seq and event = type, and ends after message-end', async () => {
    await app.fakes.events.append(turn());
    const reply = await open();
    expect(reply.status).toBe(200);
    expect(reply.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    expect(reply.headers.get('cache-control')).toBe('no-cache, no-transform');
    const received = await frames(reply.body);
    expect(received.map((frame) => [frame.id, frame.event])).toEqual([
      ['1', 'message-start'],
      ['2', 'content'],
      ['3', 'content'],
      ['4', 'message-end'],
    ]);
    expect(received.map((frame) => frame.data)).toEqual(turn());
  });

  it('resumes after Last-Event-ID and relays what comes later, from the store or the live feed', async () => {
    const [start, first, second, end] = turn();
    await app.fakes.events.append([start!, first!]);
    const reply = await open({ 'last-event-id': '1' });
    const reading = frames(reply.body);
    // As an activity does: stored first, then sent live; the relay takes each once, whichever it sees first.
    await app.fakes.events.append([second!, end!]);
    app.fakes.feed.push('user_001', second!);
    app.fakes.feed.push('user_001', end!);
    expect((await reading).map((frame) => frame.data.seq)).toEqual([2, 3, 4]);
  });

  it('answers 204 to a client that has the whole turn, and 400 to a resume point past its end', async () => {
    await app.fakes.events.append(turn());
    const done = await open({ 'last-event-id': '4' });
    expect(done.status).toBe(204);
    expect(done.headers.get('cache-control')).toBe('no-store');
    const past = await open({}, `/api/stream/${sessionId}/${chatMessageId}?lastEventId=9`);
    expect(past.status).toBe(400);
    expect(await past.json()).toMatchObject({
      code: 'validation_failed',
      detail: expect.stringMatching(/past the end/),
    });
  });

  it("refuses a bad Last-Event-ID or path (400), another user's session (404) and another userId (403)", async () => {
    expect((await open({ 'last-event-id': 'abc' })).status).toBe(400);
    const badPath = await callEndpoint(streamTurnEndpoint, app, {
      headers: asUser('user_001'),
      params: { sessionId: 'not-a-uuid', chatMessageId },
    });
    expect(badPath.status).toBe(400);
    expect(await badPath.json()).toMatchObject({ errors: [{ path: 'sessionId' }] });
    const stranger = await callEndpoint(streamTurnEndpoint, app, {
      headers: asUser('user_002'),
      params: { sessionId, chatMessageId },
    });
    expect(stranger.status).toBe(404);
    expect((await open({}, `/api/stream/${sessionId}/${chatMessageId}?userId=user_002`)).status).toBe(403);
  });
});

describe('bounded streams', () => {
  async function openFor(
    streams: TestApp,
    user: string,
  ): Promise<{ status: number; body: ReadableStream<Uint8Array> | null; json: () => Promise<unknown> }> {
    const { sessionId } = await streams.fakes.sessions.create(user);
    // A turn never posted: its stream waits for a first event that does not come.
    return callEndpoint(streamTurnEndpoint, streams, {
      headers: asUser(user),
      params: { sessionId, chatMessageId: randomUUID() },
    });
  }

  it('refuses one stream over STREAMS_PER_USER with 429 until one of the caller ends', async () => {
    const streams = createTestApp({ settings: { STREAMS_PER_USER: '2' } });
    const held = [await openFor(streams, 'user_001'), await openFor(streams, 'user_001')];
    expect(held.map((reply) => reply.status)).toEqual([200, 200]);

    const refused = await openFor(streams, 'user_001');
    expect(refused.status).toBe(429);
    expect(await refused.json()).toMatchObject({
      code: 'quota_exceeded',
      limit: 'streams-per-user',
      allowed: 2,
      current: 2,
    });
    // Another user's streams are theirs to count.
    const other = await openFor(streams, 'user_002');
    expect(other.status).toBe(200);

    await held[0]!.body!.cancel();
    const again = await openFor(streams, 'user_001');
    expect(again.status).toBe(200);
    for (const reply of [held[1]!, other, again]) await reply.body!.cancel();
    expect(streams.streaming.openStreams.count('user_001')).toBe(0);
  });

  it('closes the stream of a turn never posted after SSE_START_TIMEOUT_MS with a readable event', async () => {
    const streams = createTestApp({ settings: { SSE_START_TIMEOUT_MS: '1000' } });
    const reply = await openFor(streams, 'user_001');
    expect(reply.status).toBe(200);
    const text = await new Response(reply.body).text();
    expect(text).toMatch(
      /^event: stream-closed\ndata: \{"reason":"not-started","message":"This answer has not started/m,
    );
    expect(streams.streaming.openStreams.count('user_001')).toBe(0);
  }, 15_000);
});
