// POST /api/chat/{sessionId}/{chatMessageId}/cancel in process: real HttpRequest objects, the real use-case, and
// in-memory stores. The owner's queued or running turn: 202, the stop recorded; a turn that has ended: 200 saying
// how it ended, nothing recorded; another user's or an unknown turn: 404; bad ids: 400. All refusals problem+json.
import { randomUUID } from 'node:crypto';
import { beforeEach, describe, expect, it } from 'vitest';
import type { ChatEvent, ChatEventBody } from '../shared/streaming/contracts.js';
import { asUser, callEndpoint } from '../test/support/call-endpoint.js';
import { createTestApp, type TestApp } from '../test/support/in-memory-ports.js';
import { cancelTurnEndpoint, postChatEndpoint, startSessionEndpoint } from './chat.js';

let app: TestApp;
beforeEach(() => {
  app = createTestApp();
});

async function postTurn(userId = 'user_001'): Promise<{ sessionId: string; chatMessageId: string }> {
  const session = await callEndpoint(startSessionEndpoint, app, { headers: asUser(userId) });
  const { sessionId } = await session.json<{ sessionId: string }>();
  const chatMessageId = randomUUID();
  const posted = await callEndpoint(postChatEndpoint, app, {
    headers: asUser(userId),
    json: { sessionId, chatMessageId, text: 'reply with 200 words' },
  });
  expect(posted.status).toBe(202);
  return { sessionId, chatMessageId };
}

function cancel(turn: { sessionId: string; chatMessageId: string }, userId = 'user_001') {
  return callEndpoint(cancelTurnEndpoint, app, {
    headers: asUser(userId),
    path: `/api/chat/${turn.sessionId}/${turn.chatMessageId}/cancel`,
    params: turn,
  });
}

async function storeEvents(turn: { sessionId: string; chatMessageId: string }, bodies: ChatEventBody[]) {
  await app.fakes.events.append(bodies.map((body, i): ChatEvent => ({ ...body, ...turn, seq: i + 1 })));
}

const start: ChatEventBody = { type: 'message-start', userMessageId: 'u', assistantMessageId: 'a' };

async function expectProblem(reply: Awaited<ReturnType<typeof callEndpoint>>, status: number) {
  expect(reply.status).toBe(status);
  expect(reply.headers.get('content-type')).toBe('application/problem+json');
  return reply.json<{ status: number; detail: string; errors?: { path: string }[] }>();
}

describe('POST /api/chat/{sessionId}/{chatMessageId}/cancel', () => {
  it("records the stop of the owner's queued or running turn (202), and a second stop changes nothing", async () => {
    const turn = await postTurn();
    const first = await cancel(turn);
    expect(first.status).toBe(202);
    expect(first.headers.get('cache-control')).toBe('no-store');
    expect(await first.json()).toEqual({ ...turn, status: 'cancelling' });
    expect([...app.fakes.cancellations.requests.values()]).toEqual([
      { ref: { userId: 'user_001', ...turn }, requestedAt: expect.any(String) },
    ]);
    const recorded = structuredClone([...app.fakes.cancellations.requests.values()]);

    await storeEvents(turn, [start, { type: 'content', delta: 'Hello' }]);
    const again = await cancel(turn);
    expect(again.status).toBe(202);
    expect([...app.fakes.cancellations.requests.values()]).toEqual(recorded);
  });

  it('leaves a turn that has ended as it is and says how it ended (200)', async () => {
    const answered = await postTurn();
    await storeEvents(answered, [
      start,
      { type: 'content', delta: 'Hi' },
      { type: 'message-end', finishReason: 'stop' },
    ]);
    const reply = await cancel(answered);
    expect(reply.status).toBe(200);
    expect(await reply.json()).toEqual({ ...answered, status: 'finished', finishReason: 'stop' });

    // The fake event store holds one turn: the next one starts afresh.
    app = createTestApp();
    const stopped = await postTurn();
    await storeEvents(stopped, [start, { type: 'message-end', finishReason: 'cancelled' }]);
    expect(await (await cancel(stopped)).json()).toMatchObject({
      status: 'finished',
      finishReason: 'cancelled',
    });
    expect(app.fakes.cancellations.requests.size).toBe(0);
  });

  it('says a failed turn has finished, with finish reason error', async () => {
    const failed = await postTurn();
    await storeEvents(failed, [start, { type: 'error', code: 'llm_unavailable', message: 'down' }]);
    const reply = await cancel(failed);
    expect(reply.status).toBe(200);
    expect(await reply.json()).toMatchObject({ status: 'finished', finishReason: 'error' });
  });

  it('says a turn posted longer ago than its events are kept has finished', async () => {
    const old = await postTurn();
    for (const record of app.fakes.posted.records.values()) record.postedAt = '2020-01-01T00:00:00.000Z';
    const reply = await cancel(old);
    expect(reply.status).toBe(200);
    expect(await reply.json()).toEqual({ ...old, status: 'finished' });
    expect(app.fakes.cancellations.requests.size).toBe(0);
  });

  it("refuses another user's turn and an unknown one alike (404), recording nothing", async () => {
    const turn = await postTurn('user_001');
    const other = await expectProblem(await cancel(turn, 'user_002'), 404);
    const unknown = await expectProblem(await cancel({ ...turn, chatMessageId: randomUUID() }), 404);
    expect(other.detail).toMatch(/No turn/);
    expect(unknown.detail).toMatch(/No turn/);
    // A session of the caller that does not hold the turn, and one that does not exist.
    const mine = await postTurn('user_002');
    await expectProblem(
      await cancel({ sessionId: mine.sessionId, chatMessageId: turn.chatMessageId }, 'user_002'),
      404,
    );
    await expectProblem(await cancel({ sessionId: randomUUID(), chatMessageId: turn.chatMessageId }), 404);
    expect(app.fakes.cancellations.requests.size).toBe(0);
  });

  it('refuses ids that are not UUIDs (400), naming the parameter', async () => {
    const turn = await postTurn();
    const badTurn = await expectProblem(await cancel({ ...turn, chatMessageId: 'not-a-uuid' }), 400);
    expect(badTurn.errors?.map((error) => error.path)).toEqual(['chatMessageId']);
    const badSession = await expectProblem(await cancel({ ...turn, sessionId: '42' }), 400);
    expect(badSession.errors?.map((error) => error.path)).toEqual(['sessionId']);
    await expectProblem(
      await callEndpoint(cancelTurnEndpoint, app, { params: turn, path: '/api/chat/x/y/cancel' }),
      401,
    );
    expect(app.fakes.cancellations.requests.size).toBe(0);
  });

  it('takes ids in any case, as the turn was posted', async () => {
    const turn = await postTurn();
    const reply = await cancel({
      sessionId: turn.sessionId.toUpperCase(),
      chatMessageId: turn.chatMessageId.toUpperCase(),
    });
    expect(reply.status).toBe(202);
  });
});
