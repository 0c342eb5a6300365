// Every bad input to the chat front door, as a client could send it to the running local runtime: each gets an
// RFC 9457 problem (4xx with a code) and none puts anything on the user-messages queue or starts a turn.
import { randomUUID } from 'node:crypto';
import type { InvocationContext } from '@azure/functions';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FunctionDefinition } from '../../functions/definition.js';
import { functionDefinitions } from '../../functions/table.js';
import type { LocalRuntime } from '../../local/runtime.js';
import { chatBodyMaxBytes } from '../../shared/chat/contracts/http.js';
import { turnInstanceId } from '../../shared/conversation/turn-ids.js';
import { USER_MESSAGES_QUEUE } from '../../shared/chat/contracts/queue.js';
import { ChatClient, DEV_IDENTITY_HEADER, type RealtimeListener } from '../support/chat-client.js';
import { startTestRuntime } from '../support/local-runtime.js';

const MAX_TEXT_CHARS = 100;
/** functions/chat.ts: room for the longest text however JSON spells it, plus the other fields. */
const BODY_LIMIT_BYTES = chatBodyMaxBytes(MAX_TEXT_CHARS);

interface Problem {
  status: number;
  code: string;
  detail: string;
  errors?: { path: string; message: string }[];
}

describe('chat input validation', () => {
  let runtime: LocalRuntime;
  let alice: ChatClient;
  let aliceLive: RealtimeListener;
  let sessionId: string;
  /** Every message the chat worker was handed, whatever happened next. */
  const delivered: unknown[] = [];

  const recordingWorker = functionDefinitions.map((definition): FunctionDefinition => {
    if (definition.kind !== 'serviceBus' || definition.name !== 'chatWorker') return definition;
    const handler = (message: unknown, context: InvocationContext) => {
      delivered.push(message);
      return definition.handler(message, context);
    };
    return { ...definition, handler };
  });

  beforeAll(async () => {
    runtime = await startTestRuntime({
      settings: { CHAT_MAX_TEXT_CHARS: String(MAX_TEXT_CHARS) },
      functions: recordingWorker,
    });
    alice = new ChatClient(runtime.url, 'user_001');
    aliceLive = await alice.listen();
    sessionId = await alice.startSession();
  });
  afterAll(async () => {
    aliceLive?.stop();
    await runtime?.stop();
  });

  const chatUrl = () => `${runtime.url}/api/chat`;
  const json = { 'content-type': 'application/json' };
  const valid = () => ({ sessionId, chatMessageId: randomUUID(), text: 'hello' });

  /**
   * Sends a request and checks it was refused with a problem, and that nothing reached the queue: the worker
   * got no message and, for a chat body with ids, no turn exists for them.
   */
  async function expectRefused(
    send: () => Promise<Response>,
    status: number,
    code: string,
    turn?: { sessionId?: unknown; chatMessageId?: unknown },
  ): Promise<Problem> {
    const deliveredBefore = delivered.length;
    const response = await send();
    const text = await response.text();
    expect(response.status, text).toBe(status);
    expect(response.headers.get('content-type')).toBe('application/problem+json');
    const problem = JSON.parse(text) as Problem;
    expect(problem).toMatchObject({ status, code });
    expect(problem.detail).toMatch(/\S/);

    await runtime.serviceBus.idle();
    expect(delivered).toHaveLength(deliveredBefore);
    expect(runtime.serviceBus.activeMessageCount({ queueName: USER_MESSAGES_QUEUE })).toBe(0);
    if (typeof turn?.sessionId === 'string' && typeof turn.chatMessageId === 'string')
      expect(await runtime.durable.getStatus(turnInstanceId(turn.sessionId, turn.chatMessageId))).toBe(
        undefined,
      );
    return problem;
  }

  /** POST /api/chat of a JSON body as alice, expected to be refused. */
  function postRefused(body: Record<string, unknown> | unknown[] | string, status: number, code: string) {
    const turn = typeof body === 'object' && !Array.isArray(body) ? body : undefined;
    return expectRefused(() => alice.post(body), status, code, turn);
  }

  const paths = (problem: Problem) => problem.errors?.map((error) => error.path) ?? [];

  it('refuses a caller without an identity or with an unknown dev user (401)', async () => {
    const body = JSON.stringify(valid());
    await expectRefused(
      () => fetch(chatUrl(), { method: 'POST', headers: json, body }),
      401,
      'unauthenticated',
    );
    await expectRefused(
      () =>
        fetch(chatUrl(), { method: 'POST', headers: { ...json, [DEV_IDENTITY_HEADER]: 'user_999' }, body }),
      401,
      'unauthenticated',
    );
  });

  it('refuses malformed JSON and bodies that are not objects (400)', async () => {
    const malformed = await expectRefused(
      () => fetch(chatUrl(), { method: 'POST', headers: alice.headers(json), body: '{"sessionId": "' }),
      400,
      'validation_failed',
    );
    expect(malformed.detail).toMatch(/JSON/);
    await postRefused([valid()], 400, 'validation_failed');
    await postRefused('hello', 400, 'validation_failed');
    await expectRefused(
      () => fetch(chatUrl(), { method: 'POST', headers: alice.headers(json) }),
      400,
      'validation_failed',
    );
  });

  it('names each missing field (400)', async () => {
    for (const field of ['sessionId', 'chatMessageId', 'text']) {
      const body: Record<string, unknown> = valid();
      delete body[field];
      const problem = await postRefused(body, 400, 'validation_failed');
      expect(paths(problem)).toEqual([field]);
      expect(problem.detail).toContain(field);
    }
  });

  it('refuses ids that are not UUIDs (400), naming each field once', async () => {
    const badSession = await postRefused({ ...valid(), sessionId: 'session-1' }, 400, 'validation_failed');
    expect(paths(badSession)).toEqual(['sessionId']);
    expect(badSession.detail).toBe(
      'Invalid chat message: sessionId must be a UUID such as 0f8fad5b-d9cb-469f-a165-70867728950e, or 16 letters and digits (an AI SDK id).',
    );
    const badMessage = await postRefused({ ...valid(), chatMessageId: '12345' }, 400, 'validation_failed');
    expect(paths(badMessage)).toEqual(['chatMessageId']);
    const notText = await postRefused({ ...valid(), chatMessageId: 42 }, 400, 'validation_failed');
    expect(paths(notText)).toEqual(['chatMessageId']);
  });

  it('refuses empty, blank, non-string and over-long text (400)', async () => {
    for (const text of ['', '  \n\t ', 7, 'x'.repeat(MAX_TEXT_CHARS + 1)]) {
      const problem = await postRefused({ ...valid(), text }, 400, 'validation_failed');
      expect(paths(problem)).toEqual(['text']);
    }
  });

  it('refuses text and question that differ (400)', async () => {
    const problem = await postRefused({ ...valid(), question: 'something else' }, 400, 'validation_failed');
    expect(paths(problem)).toEqual(['question']);
  });

  it('refuses a body over the size limit, declared or streamed (413)', async () => {
    const body = JSON.stringify({ ...valid(), padding: 'x'.repeat(BODY_LIMIT_BYTES) });
    await expectRefused(
      () => fetch(chatUrl(), { method: 'POST', headers: alice.headers(json), body }),
      413,
      'payload_too_large',
    );
    // Without a content-length the limit is enforced while reading.
    const streamed = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new TextEncoder().encode(body));
        controller.close();
      },
    });
    await expectRefused(
      () =>
        fetch(chatUrl(), {
          method: 'POST',
          headers: alice.headers(json),
          body: streamed,
          duplex: 'half',
        }),
      413,
      'payload_too_large',
    );
  });

  it('refuses a body that is not JSON by its content type (415)', async () => {
    await expectRefused(
      () =>
        fetch(chatUrl(), {
          method: 'POST',
          headers: alice.headers({ 'content-type': 'text/plain' }),
          body: JSON.stringify(valid()),
        }),
      415,
      'unsupported_media_type',
    );
  });

  it('refuses an unknown session and another user’s session alike (404)', async () => {
    await postRefused({ ...valid(), sessionId: randomUUID() }, 404, 'not_found');
    const bobSession = await new ChatClient(runtime.url, 'user_002').startSession();
    await postRefused({ ...valid(), sessionId: bobSession }, 404, 'not_found');
  });

  it('refuses a body naming another user (403)', async () => {
    await postRefused({ ...valid(), userId: 'user_002' }, 403, 'forbidden');
  });

  it('accepts `question` alone and answers it (202)', async () => {
    const chatMessageId = randomUUID();
    const deliveredBefore = delivered.length;
    const response = await alice.post({ sessionId, chatMessageId, question: 'a question' });
    expect(response.status).toBe(202);
    expect(await response.json()).toEqual({
      sessionId,
      chatMessageId,
      status: 'queued',
      stream: expect.stringMatching(
        new RegExp(`^/api/stream/${sessionId}/${chatMessageId}\\?ticket=[A-Za-z0-9_-]+\\.[A-Za-z0-9_-]{43}$`),
      ) as unknown,
    });
    const events = await aliceLive.waitForTerminal(chatMessageId);
    await runtime.serviceBus.idle();
    expect(delivered).toHaveLength(deliveredBefore + 1);
    expect(delivered.at(-1)).toMatchObject({ sessionId, chatMessageId, text: 'a question' });
    // Answered (by the chat worker's own first round: no tools, so no orchestration).
    expect(events.at(-1)).toMatchObject({ type: 'message-end' });
    const memory = await runtime.app.chat.turn.workingMemory.load('user_001', sessionId);
    expect(memory.messages.filter((m) => m.chatMessageId === chatMessageId).map((m) => m.role)).toEqual([
      'user',
      'assistant',
    ]);
  });

  it('refuses a bad Last-Event-ID and a stream path without UUIDs (400)', async () => {
    for (const lastEventId of ['abc', '-1', '1.5']) {
      const problem = await expectRefused(
        () => alice.openStream(sessionId, randomUUID(), { 'last-event-id': lastEventId }),
        400,
        'validation_failed',
      );
      expect(problem.detail).toContain('Last-Event-ID');
    }
    await expectRefused(() => alice.openStream('not-a-session', randomUUID()), 400, 'validation_failed');
    await expectRefused(() => alice.openStream(sessionId, 'not-a-message'), 400, 'validation_failed');
  });

  it('refuses to start a session for another user (403)', async () => {
    await expectRefused(
      () =>
        fetch(`${runtime.url}/api/session/start`, {
          method: 'POST',
          headers: alice.headers(json),
          body: JSON.stringify({ userId: 'user_002' }),
        }),
      403,
      'forbidden',
    );
    const own = await fetch(`${runtime.url}/api/session/start`, {
      method: 'POST',
      headers: alice.headers(json),
      body: JSON.stringify({ userId: 'user_001' }),
    });
    expect(own.status).toBe(201);
  });
});
