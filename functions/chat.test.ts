// POST /api/session/start and POST /api/chat in process: real HttpRequest objects, the real use-cases, and
// in-memory sessions and queue. Each refusal is problem+json and leaves the queue untouched.
import { createHash, randomUUID } from 'node:crypto';
import { beforeEach, describe, expect, it } from 'vitest';
import { chatBodyMaxBytes } from '../shared/chat/contracts/http.js';
import { MAX_PATH_GAPS } from '../shared/conversation/branches.js';
import { USER_MESSAGES_QUEUE } from '../shared/chat/contracts/queue.js';
import { DependencyError } from '../shared/errors.js';
import { hashStreamTicket } from '../shared/streaming/stream-tickets.js';
import { asUser, callEndpoint } from '../test/support/call-endpoint.js';
import { createTestApp, type TestApp } from '../test/support/in-memory-ports.js';
import { postChatEndpoint, regenerateEndpoint, startSessionEndpoint } from './chat.js';

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

  it('queues the message under a session-scoped id, and answers 202 with a stream URL holding a ticket', async () => {
    const chatMessageId = randomUUID().toUpperCase();
    const reply = await post({ sessionId, chatMessageId, text: 'hello' });
    expect(reply.status).toBe(202);
    const path = `/api/stream/${sessionId}/${chatMessageId.toLowerCase()}`;
    const body = await reply.json<{ stream: string }>();
    expect(body).toEqual({
      sessionId,
      chatMessageId: chatMessageId.toLowerCase(),
      status: 'queued',
      stream: expect.stringMatching(
        new RegExp(`^${path}\\?ticket=[A-Za-z0-9_-]+\\.[A-Za-z0-9_-]{43}$`),
      ) as unknown,
    });
    expect(reply.headers.get('location')).toBe(body.stream);
    // Only the ticket's hash is kept, bound to this turn of this user.
    const ticket = new URL(body.stream, 'http://x').searchParams.get('ticket') ?? '';
    expect([...app.fakes.tickets.grants.keys()]).toEqual([`${sessionId}/${hashStreamTicket(ticket)}`]);
    expect([...app.fakes.tickets.grants.values()]).toEqual([
      {
        userId: 'user_001',
        sessionId,
        chatMessageId: chatMessageId.toLowerCase(),
        expiresAt: expect.stringMatching(/^\d{4}-/) as unknown,
      },
    ]);
    expect(app.fakes.publisher.published).toEqual([
      {
        entity: USER_MESSAGES_QUEUE,
        message: {
          messageId: `${sessionId}.${chatMessageId.toLowerCase()}`,
          sessionId,
          subject: 'chat-message',
          body: {
            userId: 'user_001',
            sessionId,
            chatMessageId: chatMessageId.toLowerCase(),
            text: 'hello',
            postedAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/) as unknown,
            // The catalogue's model the conversation runs on (the default: the one configured model).
            model: 'offline',
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

  it('limits the body by the longest text JSON can spell, so the character limit is the one a client meets', async () => {
    // 100 characters, each sent as a \\uXXXX escape (6 bytes), in both text and question: accepted.
    const escaped = '\\u4e2d'.repeat(100);
    const raw = `{"sessionId":"${sessionId}","chatMessageId":"${randomUUID()}","text":"${escaped}","question":"${escaped}"}`;
    const accepted = await callEndpoint(postChatEndpoint, app, {
      headers: asUser('user_001', { 'content-type': 'application/json' }),
      body: raw,
    });
    expect(accepted.status).toBe(202);
    expect(app.fakes.publisher.published.at(-1)?.message.body).toMatchObject({ text: '中'.repeat(100) });
    // One character more is refused by the character limit (400), not the byte limit.
    const tooLong = await callEndpoint(postChatEndpoint, app, {
      headers: asUser('user_001', { 'content-type': 'application/json' }),
      body: raw
        .replace(`"text":"${escaped}"`, `"text":"${escaped}\\u4e2d"`)
        .replace(`,"question":"${escaped}"`, ''),
    });
    await expectProblem(tooLong, 400, 'validation_failed');
    const reply = await post({
      sessionId,
      chatMessageId: randomUUID(),
      text: 'x',
      padding: 'y'.repeat(chatBodyMaxBytes(100)),
    });
    await expectProblem(reply, 413, 'payload_too_large');
  });

  it('takes use_memory or useMemory, queues false only, and refuses the two disagreeing', async () => {
    const bodies = () =>
      app.fakes.publisher.published.map(({ message }) => message.body as { useMemory?: boolean });
    const base = () => ({ sessionId, chatMessageId: randomUUID(), text: 'hello' });
    expect((await post({ ...base(), use_memory: false })).status).toBe(202);
    expect((await post({ ...base(), useMemory: false })).status).toBe(202);
    expect((await post({ ...base(), use_memory: false, useMemory: false })).status).toBe(202);
    expect((await post({ ...base(), use_memory: true })).status).toBe(202);
    expect((await post(base())).status).toBe(202);
    // Absent means true: a message posted without the flag keeps the shape it always had.
    expect(bodies().map((body) => body.useMemory)).toEqual([false, false, false, undefined, undefined]);
    expect(bodies().map((body) => 'useMemory' in body)).toEqual([true, true, true, false, false]);

    const disagreeing = await expectProblem(
      await post({ ...base(), use_memory: true, useMemory: false }),
      400,
      'validation_failed',
    );
    expect(disagreeing.errors?.map((error) => error.path)).toEqual(['useMemory']);
    expect(disagreeing.detail).toMatch(/another name for use_memory/);
    const notBoolean = await expectProblem(
      await post({ ...base(), use_memory: 'no' }),
      400,
      'validation_failed',
    );
    expect(notBoolean.errors?.map((error) => error.path)).toEqual(['use_memory']);
    expect(bodies()).toHaveLength(5);
  });

  it('names a bad id once in the problem (no "chatMessageId chatMessageId")', async () => {
    const problem = await expectProblem(
      await post({ sessionId, chatMessageId: '12345', text: 'x' }),
      400,
      'validation_failed',
    );
    expect(problem.detail).toBe(
      'Invalid chat message: chatMessageId must be a UUID such as 0f8fad5b-d9cb-469f-a165-70867728950e, or 16 letters and digits (an AI SDK id).',
    );
  });
});

describe('POST /api/chat: idempotency per session', () => {
  const post = (json: unknown, user = 'user_001') =>
    callEndpoint(postChatEndpoint, app, { headers: asUser(user), json });
  const queued = () =>
    app.fakes.publisher.published.map(({ message }) => ({ id: message.messageId, body: message.body }));

  it('re-publishes a re-post with the same text identically, and gives a fresh ticket to the same stream', async () => {
    const { sessionId } = await app.fakes.sessions.create('user_001');
    const chatMessageId = randomUUID();
    const first = await post({ sessionId, chatMessageId, text: 'hello' });
    const again = await post({ sessionId, chatMessageId, text: 'hello' });
    expect([first.status, again.status]).toEqual([202, 202]);
    const [a, b] = [await first.json<{ stream: string }>(), await again.json<{ stream: string }>()];
    const path = (stream: string) => stream.split('?')[0];
    expect(path(b.stream)).toBe(path(a.stream));
    expect(b.stream).not.toBe(a.stream);
    // The same message twice (same id, same postedAt): the broker and the turn's instance id keep it to one turn.
    const [one, two] = queued();
    expect(two).toEqual(one);
    expect(one?.id).toBe(`${sessionId}.${chatMessageId}`);
  });

  it('refuses the same id with another text (409) and queues nothing more', async () => {
    const { sessionId } = await app.fakes.sessions.create('user_001');
    const chatMessageId = randomUUID();
    expect((await post({ sessionId, chatMessageId, text: 'hello' })).status).toBe(202);
    const conflict = await expectProblem(
      await post({ sessionId, chatMessageId, text: 'something else' }),
      409,
      'conflict',
    );
    expect(conflict.detail).toMatch(/already posted in this session with a different text/);
    expect(queued()).toHaveLength(1);
  });

  it("keeps the same id in two sessions, or two users' sessions, apart", async () => {
    const chatMessageId = randomUUID();
    const own1 = (await app.fakes.sessions.create('user_001')).sessionId;
    const own2 = (await app.fakes.sessions.create('user_001')).sessionId;
    const bobs = (await app.fakes.sessions.create('user_002')).sessionId;
    expect((await post({ sessionId: bobs, chatMessageId, text: 'from bob' }, 'user_002')).status).toBe(202);
    expect((await post({ sessionId: own1, chatMessageId, text: 'first' })).status).toBe(202);
    expect((await post({ sessionId: own2, chatMessageId, text: 'second' })).status).toBe(202);
    expect(queued().map((message) => message.id)).toEqual([
      `${bobs}.${chatMessageId}`,
      `${own1}.${chatMessageId}`,
      `${own2}.${chatMessageId}`,
    ]);
  });

  it('queues nothing when the record of posted messages fails, and a retry goes through', async () => {
    const { sessionId } = await app.fakes.sessions.create('user_001');
    const chatMessageId = randomUUID();
    app.fakes.posted.failNext = new DependencyError(
      'cosmos',
      'Cosmos DB failed recording the posted message.',
    );
    await expectProblem(await post({ sessionId, chatMessageId, text: 'hello' }), 503, 'dependency_failed');
    expect(queued()).toEqual([]);
    expect((await post({ sessionId, chatMessageId, text: 'hello' })).status).toBe(202);
    expect(queued()).toHaveLength(1);
  });

  it('publishes again after a crash between recording and publishing, with the first postedAt', async () => {
    const { sessionId } = await app.fakes.sessions.create('user_001');
    const chatMessageId = randomUUID();
    // The first attempt recorded the message, then died before it reached the queue.
    await app.fakes.posted.claim({
      userId: 'user_001',
      sessionId,
      chatMessageId,
      textSha256: createHash('sha256').update('hello').digest('hex'),
      postedAt: '2026-11-22T09:00:00.000Z',
    });
    expect((await post({ sessionId, chatMessageId, text: 'hello' })).status).toBe(202);
    expect(queued()).toEqual([
      {
        id: `${sessionId}.${chatMessageId}`,
        body: {
          userId: 'user_001',
          sessionId,
          chatMessageId,
          text: 'hello',
          postedAt: '2026-11-22T09:00:00.000Z',
          model: 'offline',
        },
      },
    ]);
  });
});

describe('edit and regenerate at the front door', () => {
  let sessionId: string;
  /** A turn answered and committed: its id. */
  let answered: string;
  beforeEach(async () => {
    sessionId = (await app.fakes.sessions.create('user_001')).sessionId;
    answered = randomUUID();
    await app.fakes.posted.claim({
      userId: 'user_001',
      sessionId,
      chatMessageId: answered,
      textSha256: createHash('sha256').update('What is 2 + 2?').digest('hex'),
      postedAt: '2026-11-22T09:00:00.000Z',
      useMemory: false,
    });
    await app.fakes.workingMemory.append('user_001', sessionId, [
      {
        messageId: `${answered}_user`,
        chatMessageId: answered,
        role: 'user',
        content: 'What is 2 + 2?',
        timestamp: 't',
      },
      {
        messageId: `${answered}_assistant`,
        chatMessageId: answered,
        role: 'assistant',
        content: '4',
        timestamp: 't',
      },
    ]);
  });
  const post = (json: unknown, user = 'user_001') =>
    callEndpoint(postChatEndpoint, app, { headers: asUser(user), json });
  const regenerate = (of: string, json: unknown, user = 'user_001', session = sessionId) =>
    callEndpoint(regenerateEndpoint, app, {
      headers: asUser(user),
      params: { sessionId: session, chatMessageId: of },
      json,
    });
  const queued = () =>
    app.fakes.publisher.published.map(({ message }) => message.body as Record<string, unknown>);

  it('queues an edit with what it replaces; a re-post must replace the same message', async () => {
    const chatMessageId = randomUUID();
    const edit = { sessionId, chatMessageId, text: 'What is 3 + 3?', editOf: answered.toUpperCase() };
    expect((await post(edit)).status).toBe(202);
    expect(queued()).toEqual([
      expect.objectContaining({
        chatMessageId,
        text: 'What is 3 + 3?',
        fork: { replaces: answered, origin: 'edit' },
      }),
    ]);
    expect((await post(edit)).status).toBe(202);
    expect(queued()[1]).toEqual(queued()[0]);
    // The same id and text as a plain message, or replacing another: not the message accepted.
    const plain = await expectProblem(
      await post({ sessionId, chatMessageId, text: 'What is 3 + 3?' }),
      409,
      'conflict',
    );
    expect(plain.detail).toMatch(/different edit or regenerate target/);
    expect(queued()).toHaveLength(2);
  });

  it('regenerates with the replaced message words and use_memory choice: 202 with the new stream', async () => {
    const chatMessageId = randomUUID();
    const reply = await regenerate(answered, { chatMessageId });
    expect(reply.status).toBe(202);
    const body = await reply.json<{ chatMessageId: string; status: string; stream: string }>();
    expect(body).toMatchObject({ sessionId, chatMessageId, status: 'queued' });
    expect(reply.headers.get('location')).toBe(body.stream);
    expect(body.stream).toMatch(new RegExp(`^/api/stream/${sessionId}/${chatMessageId}\\?ticket=`));
    expect(queued()).toEqual([
      {
        userId: 'user_001',
        sessionId,
        chatMessageId,
        text: 'What is 2 + 2?',
        postedAt: expect.any(String) as unknown,
        useMemory: false,
        model: 'offline',
        fork: { replaces: answered, origin: 'regenerate' },
      },
    ]);
    // Idempotent like any post; the same new id for another turn is a conflict.
    expect((await regenerate(answered, { chatMessageId })).status).toBe(202);
    expect(queued()[1]).toEqual(queued()[0]);
    const other = randomUUID();
    await app.fakes.posted.claim({
      userId: 'user_001',
      sessionId,
      chatMessageId: other,
      textSha256: createHash('sha256').update('What is 2 + 2?').digest('hex'),
      postedAt: '2026-11-22T09:00:00.000Z',
    });
    await app.fakes.workingMemory.append('user_001', sessionId, [
      {
        messageId: `${other}_user`,
        chatMessageId: other,
        role: 'user',
        content: 'What is 2 + 2?',
        timestamp: 't',
      },
    ]);
    const conflict = await expectProblem(await regenerate(other, { chatMessageId }), 409, 'conflict');
    expect(conflict.detail).toMatch(/different edit or regenerate target/);
    expect(queued()).toHaveLength(2);
  });

  it('refuses a message still being answered (409, retry-after), an unknown one and another user alike (404)', async () => {
    const running = randomUUID();
    expect((await post({ sessionId, chatMessageId: running, text: 'still running' })).status).toBe(202);
    const early = await regenerate(running, { chatMessageId: randomUUID() });
    await expectProblem(early, 409, 'not_ready');
    expect(early.headers.get('retry-after')).toBe('2');
    await expectProblem(
      await post({ sessionId, chatMessageId: randomUUID(), text: 'x', editOf: running }),
      409,
      'not_ready',
    );
    const unknown = randomUUID();
    await expectProblem(await regenerate(unknown, { chatMessageId: randomUUID() }), 404, 'not_found');
    await expectProblem(
      await post({ sessionId, chatMessageId: randomUUID(), text: 'x', editOf: unknown }),
      404,
      'not_found',
    );
    // Another user: their own session or not, the answer an unknown session gets.
    await app.fakes.sessions.create('user_002');
    const bob = await expectProblem(
      await regenerate(answered, { chatMessageId: randomUUID() }, 'user_002'),
      404,
      'not_found',
    );
    expect(bob.detail).toMatch(/No session/);
    await expectProblem(
      await post({ sessionId, chatMessageId: randomUUID(), text: 'x', editOf: answered }, 'user_002'),
      404,
      'not_found',
    );
    await expectProblem(
      await regenerate(answered, { chatMessageId: randomUUID(), userId: 'user_001' }, 'user_002'),
      403,
      'forbidden',
    );
    expect(queued()).toHaveLength(1);
  });

  it('refuses to branch a path that already skips as many ranges as a path may (409)', async () => {
    const crowded = randomUUID();
    const gaps = Array.from({ length: MAX_PATH_GAPS }, (_, i) => ({ from: 2 + 3 * i, to: 4 + 3 * i }));
    const first = 2 + 3 * MAX_PATH_GAPS;
    const branch = { parentChatMessageId: answered, branchId: 'b', gaps };
    app.fakes.workingMemory.messages.push(
      {
        messageId: `${crowded}_user`,
        chatMessageId: crowded,
        role: 'user',
        content: 'q',
        timestamp: 't',
        ordinal: first,
        branch,
      },
      {
        messageId: `${crowded}_assistant`,
        chatMessageId: crowded,
        role: 'assistant',
        content: 'a',
        timestamp: 't',
        ordinal: first + 1,
        branch,
      },
    );
    const refused = await expectProblem(
      await regenerate(crowded, { chatMessageId: randomUUID() }),
      409,
      'conflict',
    );
    expect(refused.detail).toMatch(/already branches 64 times/);
    // One gap fewer before it, and the branch may be made.
    branch.gaps = gaps.slice(1);
    expect((await regenerate(crowded, { chatMessageId: randomUUID() })).status).toBe(202);
  });

  it('refuses bad ids and bodies (400) and queues nothing', async () => {
    for (const reply of [
      await regenerate('not-a-uuid', { chatMessageId: randomUUID() }),
      await regenerate(answered, { chatMessageId: randomUUID() }, 'user_001', 'not-a-session'),
      await regenerate(answered, { chatMessageId: 'nope' }),
      await regenerate(answered, {}),
      await regenerate(answered, { chatMessageId: answered }),
      await post({ sessionId, chatMessageId: randomUUID(), text: 'x', editOf: 'nope' }),
    ])
      await expectProblem(reply, 400, 'validation_failed');
    expect(queued()).toEqual([]);
  });
});
