// POST /api/session/start and POST /api/chat in process: real HttpRequest objects, the real use-cases, and
// in-memory sessions and queue. Each refusal is problem+json and leaves the queue untouched.
import { randomUUID } from 'node:crypto';
import { beforeEach, describe, expect, it } from 'vitest';
import { USER_MESSAGES_QUEUE } from '../shared/chat/contracts.js';
import { asUser, callEndpoint } from '../test/support/call-endpoint.js';
import { createTestApp, type TestApp } from '../test/support/in-memory-ports.js';
import { postChatEndpoint, startSessionEndpoint } from './chat.js';

let app: TestApp;
beforeEach(() => {
  app = createTestApp({ settings: { CHAT_MAX_TEXT_CHARS: '100' } });
});

async function expectProblem(
  reply: Awaited<ReturnType<typeof callEndpoint>>,
  status: number,
  code: string,
): Promise<{ detail: string; errors?: { path: string }[] }> {
  expect(reply.status).toBe(status);
  expect(reply.headers.get('content-type')).toBe('application/problem+json');
  expect(reply.headers.get('cache-control')).toBe('no-store');
  const problem = await reply.json<{
    status: number;
    code: string;
    detail: string;
    errors?: { path: string }[];
  }>();
  expect(problem).toMatchObject({ status, code });
  return problem;
}

describe('POST /api/session/start', () => {
  it('makes a session owned by the caller, with or without a body', async () => {
    const empty = await callEndpoint(startSessionEndpoint, app, { headers: asUser('user_001') });
    expect(empty.status).toBe(201);
    expect(empty.headers.get('cache-control')).toBe('no-store');
    const session = await empty.json<{ sessionId: string; userId: string; createdAt: string }>();
    expect(session).toMatchObject({ userId: 'user_001' });
    expect(app.fakes.sessions.sessions).toEqual([session]);

    const named = await callEndpoint(startSessionEndpoint, app, {
      headers: asUser('user_001'),
      json: { userId: 'user_001' },
    });
    expect(named.status).toBe(201);
  });

  it('refuses another user (403), no identity (401), bad JSON (400), other media (415) and big bodies (413)', async () => {
    await expectProblem(
      await callEndpoint(startSessionEndpoint, app, {
        headers: asUser('user_001'),
        json: { userId: 'user_002' },
      }),
      403,
      'forbidden',
    );
    await expectProblem(await callEndpoint(startSessionEndpoint, app), 401, 'unauthenticated');
    await expectProblem(
      await callEndpoint(startSessionEndpoint, app, {
        headers: asUser('user_001', { 'content-type': 'application/json' }),
        body: '{"userId":',
      }),
      400,
      'validation_failed',
    );
    await expectProblem(
      await callEndpoint(startSessionEndpoint, app, {
        headers: asUser('user_001', { 'content-type': 'text/plain' }),
        body: 'hello',
      }),
      415,
      'unsupported_media_type',
    );
    await expectProblem(
      await callEndpoint(startSessionEndpoint, app, {
        headers: asUser('user_001'),
        json: { userId: 'user_001', padding: 'x'.repeat(5_000) },
      }),
      413,
      'payload_too_large',
    );
    expect(app.fakes.sessions.sessions).toEqual([]);
  });
});

describe('POST /api/chat', () => {
  let sessionId: string;
  beforeEach(async () => {
    sessionId = (await app.fakes.sessions.create('user_001')).sessionId;
  });
  const post = (json: unknown, user = 'user_001') =>
    callEndpoint(postChatEndpoint, app, { headers: asUser(user), json });

  it('queues the message with its session and id, and answers 202 with the stream URL', async () => {
    const chatMessageId = randomUUID().toUpperCase();
    const reply = await post({ sessionId, chatMessageId, text: 'hello' });
    expect(reply.status).toBe(202);
    const stream = `/api/stream/${sessionId}/${chatMessageId.toLowerCase()}`;
    expect(reply.headers.get('location')).toBe(stream);
    expect(await reply.json()).toEqual({
      sessionId,
      chatMessageId: chatMessageId.toLowerCase(),
      status: 'queued',
      stream,
    });
    expect(app.fakes.publisher.published).toEqual([
      {
        entity: USER_MESSAGES_QUEUE,
        message: {
          messageId: chatMessageId.toLowerCase(),
          sessionId,
          subject: 'chat-message',
          body: {
            userId: 'user_001',
            sessionId,
            chatMessageId: chatMessageId.toLowerCase(),
            text: 'hello',
            postedAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/) as unknown,
          },
        },
      },
    ]);
  });

  it('names each bad field, refuses long text by the configured limit, and queues nothing', async () => {
    const missing = await expectProblem(await post({ sessionId, text: 'x' }), 400, 'validation_failed');
    expect(missing.errors?.map((error) => error.path)).toEqual(['chatMessageId']);
    const long = await expectProblem(
      await post({ sessionId, chatMessageId: randomUUID(), text: 'x'.repeat(101) }),
      400,
      'validation_failed',
    );
    expect(long.errors?.map((error) => error.path)).toEqual(['text']);
    expect(long.detail).toMatch(/at most 100 characters/);
    await expectProblem(await post([{ sessionId }]), 400, 'validation_failed');
    expect(app.fakes.publisher.published).toEqual([]);
  });

  it("answers an unknown session and another user's session alike (404), and another userId with 403", async () => {
    const unknown = randomUUID();
    const notFound = (id: string) =>
      `No session '${id}' for this user: start one with POST /api/session/start.`;
    const missing = await expectProblem(
      await post({ sessionId: unknown, chatMessageId: randomUUID(), text: 'x' }),
      404,
      'not_found',
    );
    expect(missing.detail).toBe(notFound(unknown));
    const others = await expectProblem(
      await post({ sessionId, chatMessageId: randomUUID(), text: 'x' }, 'user_002'),
      404,
      'not_found',
    );
    expect(others.detail).toBe(notFound(sessionId));
    await expectProblem(
      await post({ sessionId, chatMessageId: randomUUID(), text: 'x', userId: 'user_002' }),
      403,
      'forbidden',
    );
    expect(app.fakes.publisher.published).toEqual([]);
  });

  it('limits the body to four bytes a character of text plus 4 KiB (413)', async () => {
    const reply = await post({
      sessionId,
      chatMessageId: randomUUID(),
      text: 'x',
      padding: 'y'.repeat(100 * 4 + 4096),
    });
    await expectProblem(reply, 413, 'payload_too_large');
  });
});
