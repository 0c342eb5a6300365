// GET /api/stream with the ticket of POST /api/chat's stream URL and no identity headers, as a browser's native
// EventSource opens it: the turn's events for exactly that turn; any other ticket is 401, the same for each.
import { randomUUID } from 'node:crypto';
import { createParser } from 'eventsource-parser';
import { beforeEach, describe, expect, it } from 'vitest';
import type { ChatEvent } from '../shared/streaming/contracts.js';
import { hashStreamTicket } from '../shared/streaming/stream-tickets.js';
import { asUser, callEndpoint } from '../test/support/call-endpoint.js';
import { createTestApp, type TestApp } from '../test/support/in-memory-ports.js';
import { postChatEndpoint } from './chat.js';
import { streamTurnEndpoint } from './stream.js';

let app: TestApp;
let sessionId: string;
beforeEach(async () => {
  app = createTestApp();
  sessionId = (await app.fakes.sessions.create('user_001')).sessionId;
});

/** Posts a message as user_001 and gives the 202's stream URL. */
async function postMessage(chatMessageId: string): Promise<URL> {
  const reply = await callEndpoint(postChatEndpoint, app, {
    headers: asUser('user_001'),
    json: { sessionId, chatMessageId, text: 'hello' },
  });
  expect(reply.status).toBe(202);
  return new URL((await reply.json<{ stream: string }>()).stream, 'http://localhost:7071');
}

/** Opens a stream URL as an EventSource does: the path's parameters, its query, no identity. */
function openWithoutHeaders(url: URL, headers: Record<string, string> = {}) {
  const [, , , session = '', message = ''] = url.pathname.split('/');
  return callEndpoint(streamTurnEndpoint, app, {
    path: `${url.pathname}${url.search}`,
    params: { sessionId: session, chatMessageId: message },
    headers: { accept: 'text/event-stream', ...headers },
  });
}

async function frames(body: ReadableStream<Uint8Array> | null): Promise<ChatEvent[]> {
  const events: ChatEvent[] = [];
  const parser = createParser({ onEvent: (message) => events.push(JSON.parse(message.data) as ChatEvent) });
  const reader = body!.pipeThrough(new TextDecoderStream()).getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return events;
    parser.feed(value);
  }
}

describe('GET /api/stream with a stream ticket', () => {
  it("serves the turn's events to the ticket alone, with no identity headers", async () => {
    const chatMessageId = randomUUID();
    const url = await postMessage(chatMessageId);
    const turn: ChatEvent[] = [
      {
        type: 'message-start',
        sessionId,
        chatMessageId,
        seq: 1,
        userMessageId: 'u',
        assistantMessageId: 'a',
      },
      { type: 'content', sessionId, chatMessageId, seq: 2, delta: 'Hi.' },
      { type: 'message-end', sessionId, chatMessageId, seq: 3, finishReason: 'stop' },
    ];
    await app.fakes.events.append(turn);
    const reply = await openWithoutHeaders(url);
    expect(reply.status).toBe(200);
    expect(reply.headers.get('content-type')).toMatch(/^text\/event-stream/);
    expect(await frames(reply.body)).toEqual(turn);
    // An EventSource that reconnects sends Last-Event-ID with the same URL.
    expect((await openWithoutHeaders(url, { 'last-event-id': '3' })).status).toBe(204);
  });

  it("refuses another turn's, an unknown, a malformed and an expired ticket alike (401)", async () => {
    const mine = await postMessage(randomUUID());
    const other = await postMessage(randomUUID());
    const withTicket = (url: URL, ticket: string) => {
      const copy = new URL(url);
      copy.searchParams.set('ticket', ticket);
      return copy;
    };
    const ticketOf = (url: URL) => url.searchParams.get('ticket') ?? '';
    // An expired grant still in the store (Cosmos DB removes expired items in the background).
    const expired = `${Buffer.from('user_001').toString('base64url')}.${'E'.repeat(43)}`;
    await app.fakes.tickets.save(hashStreamTicket(expired), {
      userId: 'user_001',
      sessionId,
      chatMessageId: mine.pathname.split('/')[4]!,
      expiresAt: new Date(Date.now() - 1000).toISOString(),
    });

    const details = new Set<string>();
    for (const url of [
      withTicket(mine, ticketOf(other)),
      withTicket(mine, 'A'.repeat(43)),
      withTicket(mine, 'not a ticket'),
      withTicket(mine, expired),
    ]) {
      const reply = await openWithoutHeaders(url);
      expect(reply.status).toBe(401);
      expect(reply.headers.get('content-type')).toBe('application/problem+json');
      details.add((await reply.json<{ detail: string }>()).detail);
    }
    expect(details.size).toBe(1);
  });

  it("holds a ticket's caller to its own user id, and still takes identity headers without a ticket", async () => {
    const url = await postMessage(randomUUID());
    const named = new URL(url);
    named.searchParams.set('userId', 'user_002');
    expect((await openWithoutHeaders(named)).status).toBe(403);

    const bare = new URL(url.pathname, url);
    expect((await openWithoutHeaders(bare)).status).toBe(401);
    await app.fakes.events.append([
      {
        type: 'message-end',
        sessionId,
        chatMessageId: url.pathname.split('/')[4]!,
        seq: 1,
        finishReason: 'stop',
      },
    ]);
    expect((await openWithoutHeaders(bare, asUser('user_001'))).status).toBe(200);
  });
});
