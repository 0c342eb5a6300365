// POST /api/ui/chat and its resume in process: real HttpRequest objects, the real use-cases, in-memory ports. A
// refusal is problem+json and queues nothing; a stored turn is answered as UI message chunks, then [DONE].
import { randomUUID } from 'node:crypto';
import { beforeEach, describe, expect, it } from 'vitest';
import type { ChatEvent, ChatEventBody } from '../shared/streaming/contracts.js';
import { asUser, callEndpoint, type Reply } from '../test/support/call-endpoint.js';
import { createTestApp, type TestApp } from '../test/support/in-memory-ports.js';
import { postUiChatEndpoint, resumeUiChatEndpoint } from './ui-chat.js';

let app: TestApp;
beforeEach(() => {
  app = createTestApp({ settings: { CHAT_MAX_TEXT_CHARS: '100' } });
});

const CHAT_ID = 'aB3dE6gH9jK2mN5p';
const MESSAGE_ID = 'Zx81qWe4Rt7yUi0o';
const body = (text = 'hello', id = CHAT_ID) => ({
  id,
  messages: [{ id: MESSAGE_ID, role: 'user', parts: [{ type: 'text', text }] }],
  trigger: 'submit-message',
});

const post = (userId: string, json: unknown) =>
  callEndpoint(postUiChatEndpoint, app, { headers: asUser(userId), json });
const resume = (userId: string, id: string) =>
  callEndpoint(resumeUiChatEndpoint, app, {
    headers: asUser(userId),
    params: { id },
    path: `/api/ui/chat/${id}/stream`,
  });

async function expectProblem(reply: Reply, status: number) {
  expect(reply.status).toBe(status);
  expect(reply.headers.get('content-type')).toBe('application/problem+json');
  return reply.json<{ detail: string; errors?: { path: string }[] }>();
}

/** The chunks of a UI message stream that has ended, and whether it ended with [DONE]. */
async function chunksOf(reply: Reply): Promise<{ chunks: { type: string }[]; done: boolean }> {
  const data = (await reply.text())
    .split('\n\n')
    .filter((frame) => frame.startsWith('data: '))
    .map((frame) => frame.slice('data: '.length));
  const done = data.at(-1) === '[DONE]';
  return { chunks: data.filter((d) => d !== '[DONE]').map((d) => JSON.parse(d) as { type: string }), done };
}

function storeTurn(sessionId: string, chatMessageId: string, ...bodies: ChatEventBody[]) {
  const events = bodies.map((event, i): ChatEvent => ({ ...event, sessionId, chatMessageId, seq: i + 1 }));
  return app.fakes.events.append(events);
}

describe('POST /api/ui/chat', () => {
  it('claims an unused AI SDK chat id for the caller and queues the last message as the turn, once', async () => {
    await storeTurn(
      CHAT_ID,
      MESSAGE_ID,
      {
        type: 'message-start',
        userMessageId: `${MESSAGE_ID}_user`,
        assistantMessageId: `${MESSAGE_ID}_assistant`,
      },
      { type: 'content', delta: 'Hi.' },
      { type: 'message-end', finishReason: 'stop' },
    );
    const reply = await post('user_001', body());
    expect(reply.status).toBe(200);
    expect(reply.headers.get('x-vercel-ai-ui-message-stream')).toBe('v1');
    expect(reply.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const { chunks, done } = await chunksOf(reply);
    expect(done).toBe(true);
    expect(chunks.map((chunk) => chunk.type)).toEqual([
      'start',
      'start-step',
      'text-start',
      'text-delta',
      'text-end',
      'finish-step',
      'message-metadata',
      'finish',
    ]);
    expect(await app.fakes.sessions.find('user_001', CHAT_ID)).toMatchObject({ userId: 'user_001' });
    expect(app.fakes.publisher.published.map(({ message }) => message.body)).toEqual([
      expect.objectContaining({ sessionId: CHAT_ID, chatMessageId: MESSAGE_ID, text: 'hello' }),
    ]);
  });

  it("refuses another user's chat id (404), making and queueing nothing", async () => {
    await storeTurn(CHAT_ID, MESSAGE_ID, { type: 'message-end', finishReason: 'stop' });
    expect((await post('user_001', body())).status).toBe(200);
    const published = app.fakes.publisher.published.length;
    const problem = await expectProblem(await post('user_002', body('mine now?')), 404);
    expect(problem.detail).toMatch(/No session/);
    expect(await app.fakes.sessions.find('user_002', CHAT_ID)).toBeUndefined();
    expect(app.fakes.publisher.published).toHaveLength(published);
    // A UUID is never claimed.
    await expectProblem(await post('user_001', body('x', randomUUID())), 404);
    expect(app.fakes.publisher.published).toHaveLength(published);
  });

  it('refuses a body that is not a useChat request, naming the field, and queues nothing', async () => {
    const cases: [unknown, string][] = [
      [{ ...body(), id: '../x' }, 'id'],
      [{ ...body(), messages: 'hello' }, 'messages'],
      [
        {
          ...body(),
          messages: [{ id: MESSAGE_ID, role: 'user', parts: [{ type: 'text', text: 'x'.repeat(101) }] }],
        },
        'messages.0.parts',
      ],
      [{ ...body(), use_memory: 'no' }, 'use_memory'],
    ];
    for (const [json, path] of cases) {
      const problem = await expectProblem(await post('user_001', json), 400);
      expect(problem.errors?.map((error) => error.path)).toContain(path);
    }
    expect(app.fakes.publisher.published).toEqual([]);
    expect(app.fakes.sessions.sessions).toEqual([]);
  });
});

describe('GET /api/ui/chat/{id}/stream', () => {
  it('answers 204 when no turn runs, also for an unused AI SDK id, and makes nothing', async () => {
    expect((await resume('user_001', CHAT_ID)).status).toBe(204);
    expect(app.fakes.sessions.sessions).toEqual([]);
    await storeTurn(CHAT_ID, MESSAGE_ID, { type: 'message-end', finishReason: 'stop' });
    expect((await post('user_001', body())).status).toBe(200);
    expect((await resume('user_001', CHAT_ID)).status).toBe(204);
  });

  it("replays the running turn from its start without what a discard voided; another user's chat is 404", async () => {
    // The in-memory event store holds one turn: the session is claimed as a first post would, and the turn is running.
    await app.fakes.sessions.claim('user_001', CHAT_ID);
    const running = randomUUID();
    await app.fakes.posted.claim({
      userId: 'user_001',
      sessionId: CHAT_ID,
      chatMessageId: running,
      textSha256: '0'.repeat(64),
      postedAt: new Date().toISOString(),
    });
    await storeTurn(
      CHAT_ID,
      running,
      { type: 'message-start', userMessageId: `${running}_user`, assistantMessageId: `${running}_assistant` },
      { type: 'content', delta: 'crashed attem' },
      { type: 'discard', fromSeq: 2, toSeq: 2 },
      { type: 'content', delta: 'The answer.' },
    );
    const reply = await resume('user_001', CHAT_ID);
    expect(reply.status).toBe(200);
    const reader = reply.body!.getReader();
    let text = '';
    while (!text.includes('The answer.')) {
      const { done, value } = await reader.read();
      if (done) break;
      text += new TextDecoder().decode(value);
    }
    await reader.cancel();
    expect(text).not.toContain('crashed attem');
    expect(text).not.toContain('reset-step');
    expect(text).toContain(`"messageId":"${running}_assistant"`);

    await expectProblem(await resume('user_002', CHAT_ID), 404);
    await expectProblem(await resume('user_001', randomUUID()), 404);
  });

  it('counts a resume of a running turn under STREAMS_PER_USER: one more is 429 until one ends', async () => {
    app = createTestApp({ settings: { STREAMS_PER_USER: '2' } });
    await app.fakes.sessions.claim('user_001', CHAT_ID);
    const running = randomUUID();
    await app.fakes.posted.claim({
      userId: 'user_001',
      sessionId: CHAT_ID,
      chatMessageId: running,
      textSha256: '0'.repeat(64),
      postedAt: new Date().toISOString(),
    });
    await storeTurn(CHAT_ID, running, {
      type: 'message-start',
      userMessageId: `${running}_user`,
      assistantMessageId: `${running}_assistant`,
    });
    const held = [await resume('user_001', CHAT_ID), await resume('user_001', CHAT_ID)];
    expect(held.map((reply) => reply.status)).toEqual([200, 200]);
    expect(app.streaming.openStreams.count('user_001')).toBe(2);

    const refused = await resume('user_001', CHAT_ID);
    expect(await expectProblem(refused, 429)).toMatchObject({ limit: 'streams-per-user', allowed: 2 });
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);

    // A client that goes away gives its place back: the next resume is served.
    await held[0]!.body!.cancel();
    const again = await resume('user_001', CHAT_ID);
    expect(again.status).toBe(200);
    for (const reply of [held[1]!, again]) await reply.body!.cancel();
    expect(app.streaming.openStreams.count('user_001')).toBe(0);
  });
});
