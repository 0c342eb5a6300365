// Chat turns end to end with HOT_STORE=redis: the local runtime against a real redis-server and a scripted model
// that records what it is asked. Redis emptied (FLUSHALL, or a restart without persistence) costs nothing but a
// rebuild from long-term history; Redis down fails a turn cleanly, and the next turn after it is back sees it all.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalRuntime } from '../../local/runtime.js';
import type { ChatEvent } from '../../shared/streaming/contracts.js';
import { ChatClient, assembleText, type RealtimeListener } from '../support/chat-client.js';
import { settle, startTestRuntime } from '../support/local-runtime.js';
import { startRedisServer, type TestRedisServer } from '../support/redis-server.js';
import {
  startScriptedModel,
  type ChatCompletionRequest,
  type ScriptedModel,
} from '../support/scripted-model.js';

/** The text of the last user message of a request. */
function lastUserText(request: ChatCompletionRequest): string {
  // Embedding and structured-output calls are recorded too; only chat requests have messages.
  const users = (request.messages ?? []).filter((message) => message.role === 'user');
  return users.at(-1)?.content ?? '';
}

/** Everything a request showed the model, as one string. */
const transcript = (request: ChatCompletionRequest | undefined) =>
  (request?.messages ?? []).map((message) => `${message.role}: ${message.content ?? ''}`).join('\n');

describe('chat turns on Redis', () => {
  let redis: TestRedisServer;
  let model: ScriptedModel;
  let runtime: LocalRuntime;
  let alice: ChatClient;
  let live: RealtimeListener;

  beforeAll(async () => {
    redis = await startRedisServer();
    model = await startScriptedModel((request) => ({ content: `Answer to "${lastUserText(request)}".` }));
    runtime = await startTestRuntime({
      settings: {
        ...model.settings,
        HOT_STORE: 'redis',
        REDIS_URL: redis.url,
        REDIS_CONNECT_TIMEOUT_MS: '1000',
        REDIS_RECONNECT_MAX_DELAY_MS: '200',
        HEALTH_CACHE_SECONDS: '0',
      },
    });
    alice = new ChatClient(runtime.url, 'user_001');
    live = await alice.listen();
  }, 60_000);

  afterAll(async () => {
    live?.stop();
    await runtime?.stop();
    await model?.close();
    await redis?.stop();
  }, 60_000);

  /** Sends a message and waits for its turn's last event; the turn's events, and its id. */
  async function turnWithId(
    sessionId: string,
    text: string,
  ): Promise<{ events: ChatEvent[]; chatMessageId: string }> {
    const chatMessageId = await alice.send(sessionId, text);
    // The stored event log, over SSE. A turn that fails ends only after its activities' retries (about 7 s).
    const events = (await alice.stream(sessionId, chatMessageId, { timeoutMs: 45_000 })).map(
      (frame) => frame.data,
    );
    await settle(runtime);
    return { events, chatMessageId };
  }

  const turn = async (sessionId: string, text: string) => (await turnWithId(sessionId, text)).events;

  /** The model request that answered `text` (its first). */
  const requestFor = (text: string) => model.requests.find((request) => lastUserText(request) === text);

  it('answers a turn with the working memory in Redis, and health PINGs Redis', async () => {
    const sessionId = await alice.startSession();
    const events = await turn(sessionId, 'hello redis');
    expect(events.at(-1)).toMatchObject({ type: 'message-end' });
    expect(assembleText(events)).toBe('Answer to "hello redis".');
    // The session's entries are one hash in Redis.
    expect(await redis.command('EXISTS', `hot:{${sessionId}}`)).toBe(':1\r\n');
    const health = (await (await fetch(`${runtime.url}/api/health`)).json()) as {
      dependencies: Record<string, { status: string; detail: string }>;
    };
    expect(health.dependencies.redis).toMatchObject({ status: 'up' });
  }, 60_000);

  it('rebuilds the conversation from long-term history after FLUSHALL and after a restart', async () => {
    const sessionId = await alice.startSession();
    await turn(sessionId, 'first: my cat is called Miso');
    await turn(sessionId, 'second: she likes boxes');
    expect(await redis.command('FLUSHALL')).toBe('+OK\r\n');

    await turn(sessionId, 'third: what is she called?');
    const third = transcript(requestFor('third: what is she called?'));
    expect(third).toContain('first: my cat is called Miso');
    expect(third).toContain('Answer to "first: my cat is called Miso".');
    expect(third).toContain('second: she likes boxes');

    // A restart without persistence loses everything Redis held, the script cache included.
    await redis.stop();
    await redis.start();
    await expect
      .poll(async () => (await fetch(`${runtime.url}/api/health`)).status, { timeout: 20_000 })
      .toBe(200);
    await turn(sessionId, 'fourth: and what does she like?');
    const fourth = transcript(requestFor('fourth: and what does she like?'));
    for (const earlier of [
      'first: my cat is called Miso',
      'second: she likes boxes',
      'third: what is she called?',
    ])
      expect(fourth).toContain(earlier);
  }, 90_000);

  it('fails a turn cleanly while Redis is down, keeps the message, and answers with it all once Redis is back', async () => {
    const sessionId = await alice.startSession();
    await turn(sessionId, 'before the outage');
    await redis.stop();
    let failed: { events: ChatEvent[]; chatMessageId: string };
    try {
      failed = await turnWithId(sessionId, 'during the outage');
    } finally {
      await redis.start();
    }
    expect(failed.events.map((event) => event.type)).toContain('error');
    // The error names the store that failed, not the model, which was never asked.
    expect(failed.events.at(-1)).toMatchObject({ type: 'error', code: 'hot_store_unavailable' });
    expect(failed.events.at(-1)).toHaveProperty('message', expect.stringContaining('hot store'));
    // A WebSocket client gets the whole failed stream live too, its message-start included: no gap to wait on.
    expect(await live.waitForTerminal(failed.chatMessageId, 30_000)).toEqual(failed.events);
    // No model call was made for it: the turn could not read its working memory.
    expect(requestFor('during the outage')).toBeUndefined();

    await expect
      .poll(async () => (await fetch(`${runtime.url}/api/health`)).status, { timeout: 20_000 })
      .toBe(200);
    const events = await turn(sessionId, 'after the outage');
    expect(events.at(-1)).toMatchObject({ type: 'message-end' });
    const after = transcript(requestFor('after the outage'));
    expect(after).toContain('before the outage');
    expect(after).toContain('Answer to "before the outage".');
    expect(after).toContain('during the outage');
  }, 120_000);
});
