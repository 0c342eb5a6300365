// GET /local/stats as a developer reads it with curl: what the local services served since start grows with each
// turn posted, in the units Azure bills, and a page reaching the port under another host name gets nothing.
import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalStats } from '../../local/local-stats.js';
import type { LocalRuntime } from '../../local/runtime.js';
import { ChatClient, type RealtimeListener } from '../support/chat-client.js';
import { settle, startTestRuntime } from '../support/local-runtime.js';

async function readStats(runtime: LocalRuntime): Promise<LocalStats> {
  const response = await fetch(`${runtime.url}/local/stats`);
  expect(response.status).toBe(200);
  expect(response.headers.get('cache-control')).toBe('no-store');
  return (await response.json()) as LocalStats;
}

/** A GET over loopback naming another Host, as a page of a rebound name would send it (fetch cannot set it). */
function getWithHost(
  runtime: LocalRuntime,
  path: string,
  host: string,
): Promise<{ status: number; body: string }> {
  const { port } = new URL(runtime.url);
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, path, headers: { host } }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

describe('GET /local/stats', () => {
  let runtime: LocalRuntime;
  let alice: ChatClient;
  let live: RealtimeListener;

  beforeAll(async () => {
    runtime = await startTestRuntime();
    alice = new ChatClient(runtime.url, 'user_001');
    live = await alice.listen();
  }, 120_000);
  afterAll(async () => {
    live?.stop();
    await runtime?.stop();
  });

  it('counts what a turn costs each service, growing with every turn', async () => {
    await settle(runtime);
    const before = await readStats(runtime);
    expect(Date.parse(before.since)).toBeLessThanOrEqual(Date.now());

    const sessionId = await alice.startSession();
    // A plain answer (the worker's first round alone) and one with a tool call (handed to an orchestration).
    for (const text of ['reply with 20 words', 'use the add_numbers tool to add 2 and 3']) {
      const id = await alice.send(sessionId, text);
      await live.waitForTerminal(id);
    }
    await settle(runtime);
    const after = await readStats(runtime);

    expect(after.since).toBe(before.since);
    expect(after.cosmos.requests).toBeGreaterThan(before.cosmos.requests);
    expect(after.cosmos.requestUnits).toBeGreaterThan(before.cosmos.requestUnits);
    expect(after.cosmos.byOperation['item.create'] ?? 0).toBeGreaterThan(
      before.cosmos.byOperation['item.create'] ?? 0,
    );
    // Two messages posted: at least two sends and two completions on the user-messages queue.
    expect(after.serviceBus.sends - before.serviceBus.sends).toBeGreaterThanOrEqual(2);
    expect(after.serviceBus.completes - before.serviceBus.completes).toBeGreaterThanOrEqual(2);
    expect(after.serviceBus.operations).toBe(
      after.serviceBus.sends +
        after.serviceBus.sessionAccepts +
        after.serviceBus.receives +
        after.serviceBus.completes +
        after.serviceBus.abandons +
        after.serviceBus.deadLetters,
    );
    // Each turn streamed at least message-start, content and message-end to the one connection.
    expect(after.webPubSub.messages - before.webPubSub.messages).toBeGreaterThanOrEqual(6);
    expect(after.webPubSub.messageUnits).toBeGreaterThanOrEqual(after.webPubSub.messages);
    expect(after.webPubSub.connections).toBeGreaterThanOrEqual(1);
    expect(after.taskHub.orchestrationStarts - before.taskHub.orchestrationStarts).toBeGreaterThanOrEqual(1);
    expect(after.taskHub.activities).toBeGreaterThan(before.taskHub.activities);
    expect(after.taskHub.operations).toBeGreaterThan(before.taskHub.operations);

    // The endpoint reads the same counters the runtime hands benchmarks.
    expect(runtime.stats().cosmos.requests).toBeGreaterThanOrEqual(after.cosmos.requests);
  }, 60_000);

  it('answers only GET and HEAD, and nothing else under /local/', async () => {
    const post = await fetch(`${runtime.url}/local/stats`, { method: 'POST' });
    expect(post.status).toBe(405);
    expect(post.headers.get('allow')).toBe('GET, HEAD');
    const head = await fetch(`${runtime.url}/local/stats`, { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(await head.text()).toBe('');
    // The page's fallback leaves /local/ alone, as it does /api/.
    const unknown = await fetch(`${runtime.url}/local/no-such-thing`);
    expect(unknown.status).toBe(404);
    expect(unknown.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  });

  it('refuses a request that names another host (DNS rebinding)', async () => {
    const refused = await getWithHost(runtime, '/local/stats', 'attacker.example:80');
    expect(refused.status).toBe(403);
    expect(JSON.parse(refused.body)).toMatchObject({ code: 'host_not_allowed' });
    expect(refused.body).not.toContain('requestUnits');
    const served = await getWithHost(runtime, '/local/stats', `localhost:${new URL(runtime.url).port}`);
    expect(served.status).toBe(200);
    expect(JSON.parse(served.body)).toHaveProperty('cosmos.requestUnits');
  });
});
