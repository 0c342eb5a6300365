// Idempotency keys are scoped to the session, over the running local runtime: a chatMessageId another user,
// or another of one's own sessions, already used never swallows a message; the same message re-posted is
// answered once, on the same stream; the same id with another text is a 409 that queues nothing.
import { randomUUID } from 'node:crypto';
import type { InvocationContext } from '@azure/functions';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FunctionDefinition } from '../../functions/definition.js';
import { functionDefinitions } from '../../functions/table.js';
import type { LocalRuntime } from '../../local/runtime.js';
import { USER_MESSAGES_QUEUE, type QueuedChatMessage } from '../../shared/chat/contracts/queue.js';
import { assembleText, ChatClient, expectStatus, type SseFrame } from '../support/chat-client.js';
import { startTestRuntime } from '../support/local-runtime.js';

interface Accepted {
  sessionId: string;
  chatMessageId: string;
  status: string;
  stream: string;
}

describe('idempotency per session', () => {
  let runtime: LocalRuntime;
  let alice: ChatClient;
  let bob: ChatClient;
  /** Every message the chat worker was handed. */
  const delivered: QueuedChatMessage[] = [];
  const recordingWorker = functionDefinitions.map((definition): FunctionDefinition => {
    if (definition.kind !== 'serviceBus' || definition.name !== 'chatWorker') return definition;
    const handler = (message: unknown, context: InvocationContext) => {
      delivered.push(message as QueuedChatMessage);
      return definition.handler(message, context);
    };
    return { ...definition, handler };
  });

  beforeAll(async () => {
    runtime = await startTestRuntime({ functions: recordingWorker });
    alice = new ChatClient(runtime.url, 'user_001');
    bob = new ChatClient(runtime.url, 'user_002');
  });
  afterAll(async () => {
    await runtime?.stop();
  });

  const post = async (client: ChatClient, sessionId: string, chatMessageId: string, text: string) =>
    expectStatus<Accepted>(await client.post({ sessionId, chatMessageId, text }), 202);

  /** The turn's frames, read to the end, after checking it ended with an answer. */
  async function answered(client: ChatClient, sessionId: string, chatMessageId: string): Promise<SseFrame[]> {
    const frames = await client.stream(sessionId, chatMessageId);
    expect(frames.at(-1)?.data.type).toBe('message-end');
    expect(frames.filter((frame) => frame.data.type === 'message-start')).toHaveLength(1);
    return frames;
  }

  const deliveries = (sessionId: string, chatMessageId: string) =>
    delivered.filter((m) => m.sessionId === sessionId && m.chatMessageId === chatMessageId);

  it("answers a message whose id another user's session used first", async () => {
    const shared = randomUUID();
    const bobSession = await bob.startSession();
    const aliceSession = await alice.startSession();
    await post(bob, bobSession, shared, 'Bob asks first.');
    await answered(bob, bobSession, shared);
    await post(alice, aliceSession, shared, 'Alice asks the same id later.');
    await answered(alice, aliceSession, shared);
    expect(deliveries(aliceSession, shared)).toHaveLength(1);
    expect(deliveries(bobSession, shared)).toHaveLength(1);
  });

  it('answers the same id in two of my own sessions', async () => {
    const shared = randomUUID();
    const first = await alice.startSession();
    const second = await alice.startSession();
    await post(alice, first, shared, 'In the first session.');
    await post(alice, second, shared, 'In the second session.');
    await answered(alice, first, shared);
    await answered(alice, second, shared);
  });

  it('answers a re-post of the same message once, on the same stream, with a fresh ticket', async () => {
    const sessionId = await alice.startSession();
    const chatMessageId = randomUUID();
    const one = await post(alice, sessionId, chatMessageId, 'Say it once.');
    const two = await post(alice, sessionId, chatMessageId, 'Say it once.');
    expect(two.stream.split('?')[0]).toBe(one.stream.split('?')[0]);
    expect(two.stream).not.toBe(one.stream);
    const frames = await answered(alice, sessionId, chatMessageId);
    // Posted again once the turn has ended: still the one answer.
    await post(alice, sessionId, chatMessageId, 'Say it once.');
    await runtime.serviceBus.idle();
    expect(deliveries(sessionId, chatMessageId)).toHaveLength(1);
    expect(await alice.stream(sessionId, chatMessageId)).toEqual(frames);
  });

  it('refuses the same id with another text (409 problem) and queues nothing', async () => {
    const sessionId = await alice.startSession();
    const chatMessageId = randomUUID();
    await post(alice, sessionId, chatMessageId, 'The first text.');
    await answered(alice, sessionId, chatMessageId);
    const response = await alice.post({ sessionId, chatMessageId, text: 'Another text.' });
    expect(response.status).toBe(409);
    expect(response.headers.get('content-type')).toBe('application/problem+json');
    expect(await response.json()).toMatchObject({
      code: 'conflict',
      detail: expect.stringMatching(/different text/) as unknown,
    });
    await runtime.serviceBus.idle();
    expect(runtime.serviceBus.activeMessageCount({ queueName: USER_MESSAGES_QUEUE })).toBe(0);
    expect(deliveries(sessionId, chatMessageId)).toHaveLength(1);
  });

  it('opens the stream URL of the 202 with its ticket alone, no identity headers', async () => {
    const sessionId = await alice.startSession();
    const chatMessageId = randomUUID();
    const { stream } = await post(alice, sessionId, chatMessageId, 'Stream me by ticket.');
    expect(stream).toMatch(
      /^\/api\/stream\/[0-9a-f-]{36}\/[0-9a-f-]{36}\?ticket=[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{43}$/,
    );
    const byTicket = await fetch(`${runtime.url}${stream}`, { headers: { accept: 'text/event-stream' } });
    expect(byTicket.status).toBe(200);
    const text = await byTicket.text();
    expect(text).toMatch(/event: message-end/);
    const committed = assembleText((await answered(alice, sessionId, chatMessageId)).map((f) => f.data));
    expect(committed).not.toBe('');
    // The ticket opens only its own turn.
    const other = await fetch(`${runtime.url}${stream.replace(chatMessageId, randomUUID())}`);
    expect(other.status).toBe(401);
  });

  it('accepts 6,100 CJK characters sent as \\uXXXX escapes: the character limit is the limit', async () => {
    const sessionId = await alice.startSession();
    const chatMessageId = randomUUID();
    const escaped = '\\u4e2d'.repeat(6_100);
    const response = await fetch(`${runtime.url}/api/chat`, {
      method: 'POST',
      headers: alice.headers({ 'content-type': 'application/json' }),
      body: `{"sessionId":"${sessionId}","chatMessageId":"${chatMessageId}","text":"${escaped}"}`,
    });
    expect(response.status, await response.clone().text()).toBe(202);
    await answered(alice, sessionId, chatMessageId);
    expect(deliveries(sessionId, chatMessageId)[0]?.text).toBe('中'.repeat(6_100));
  });
});
