// STREAMS_PER_USER over real HTTP against the local runtime: a stream whose client goes away gives its place back at
// once (before or after its answer began), so streams opened and dropped in a row are never refused, while one more
// than the cap held at once is refused with 429 and retry-after.
import { randomUUID } from 'node:crypto';
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalRuntime } from '../../local/runtime.js';
import { ChatClient } from '../support/chat-client.js';
import { startTestRuntime } from '../support/local-runtime.js';

const CAP = 3;

async function waitUntil(condition: () => boolean, what: string, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`${what} did not happen within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe('streams per user', () => {
  let runtime: LocalRuntime;
  let client: ChatClient;
  let sessionId: string;
  const openNow = () => runtime.app.streaming.openStreams.count(client.userId);
  // A turn never posted: its stream waits for a first event that never comes. With both timeouts this long, only
  // the client's going away can end it within the test.
  const streamUrl = () => `${runtime.url}/api/stream/${sessionId}/${randomUUID()}`;

  beforeAll(async () => {
    runtime = await startTestRuntime({
      settings: {
        STREAMS_PER_USER: String(CAP),
        SSE_START_TIMEOUT_MS: '600000',
        SSE_IDLE_TIMEOUT_MS: '600000',
      },
    });
    client = new ChatClient(runtime.url, 'user_001');
    sessionId = await client.startSession();
  }, 60_000);
  afterAll(() => runtime?.stop());

  /** Opens a stream and reads its first bytes: it is open and counted. */
  async function hold(): Promise<{ status: number; abort: () => void }> {
    const controller = new AbortController();
    const response = await fetch(streamUrl(), { headers: client.headers(), signal: controller.signal });
    if (response.status === 200) await response.body!.getReader().read();
    else await response.body?.cancel();
    return { status: response.status, abort: () => controller.abort() };
  }

  /** Sends a stream request and closes the connection as soon as it is written, before any answer. */
  function dropBeforeAnswer(): Promise<void> {
    return new Promise((resolve) => {
      const sent = request(streamUrl(), { headers: client.headers() });
      sent.on('error', () => resolve());
      sent.on('close', () => resolve());
      sent.on('finish', () => sent.destroy());
      sent.end();
    });
  }

  it('gives a place back at once when the client goes, before or after the answer began', async () => {
    for (let round = 0; round < 3 * CAP; round += 1) {
      await dropBeforeAnswer();
      await waitUntil(() => openNow() === 0, 'the place of a stream dropped before its answer coming back');
      const opened = await hold();
      expect(opened.status).toBe(200);
      expect(openNow()).toBe(1);
      opened.abort();
      await waitUntil(() => openNow() === 0, 'the place of a stream dropped while open coming back');
    }
  }, 60_000);

  it('refuses one stream more than the cap held at once with 429 and retry-after', async () => {
    const held = [];
    for (let index = 0; index < CAP; index += 1) held.push(await hold());
    expect(held.map((stream) => stream.status)).toEqual(Array.from({ length: CAP }, () => 200));

    const refused = await fetch(streamUrl(), { headers: client.headers() });
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(await refused.json()).toMatchObject({
      code: 'quota_exceeded',
      limit: 'streams-per-user',
      allowed: CAP,
      current: CAP,
    });

    held.pop()!.abort();
    await waitUntil(() => openNow() === CAP - 1, 'a dropped stream giving its place back');
    const again = await hold();
    expect(again.status).toBe(200);
    for (const stream of [...held, again]) stream.abort();
    await waitUntil(() => openNow() === 0, 'every place coming back');
  }, 60_000);
});
