// The local runtime as a DNS-rebinding page reaches it: another Host, or a page of another Origin, gets 403 on every
// surface of the port (API, MCP, SSE, Web PubSub, the offline model, /local/) and deletes nothing; loopback names,
// LOCAL_ALLOWED_HOSTS and CORS_ALLOWED_ORIGINS are served as before.
import { request as httpRequest } from 'node:http';
import { connect } from 'node:net';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalRuntime } from '../../local/runtime.js';
import { profileFact, factSource, storeFacts } from '../support/memory-fixtures.js';
import { startTestRuntime } from '../support/local-runtime.js';

const ALLOWED_ORIGIN = 'https://chat.example.com';
const DEV = { 'x-ms-client-principal-id': 'user_001' };

let runtime: LocalRuntime;
let port: number;
beforeAll(async () => {
  runtime = await startTestRuntime({
    settings: { CORS_ALLOWED_ORIGINS: ALLOWED_ORIGIN, LOCAL_ALLOWED_HOSTS: 'devbox.internal' },
  });
  port = Number(new URL(runtime.url).port);
}, 120_000);
afterAll(async () => {
  await runtime?.stop();
});

interface Answer {
  status: number;
  contentType: string | undefined;
  body: string;
}

/** A request over loopback with the Host header a browser would send for the page's site (fetch cannot set it). */
function send(method: string, path: string, headers: Record<string, string>, body?: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      { host: '127.0.0.1', port, method, path, headers: { 'content-type': 'application/json', ...headers } },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, contentType: res.headers['content-type'], body: text }),
        );
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

const mcpInitialize = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'probe', version: '1' } },
});

/** One request per surface the port serves. */
const surfaces: [string, string, string, string?][] = [
  ['health', 'GET', '/api/health'],
  ['history', 'GET', '/api/history/users/user_001/conversations'],
  ['memories', 'GET', '/api/memory/users/user_001/memories'],
  ['forget everything', 'DELETE', '/api/memory/users/user_001/memories'],
  ['SSE stream', 'GET', `/api/stream/${randomUUID()}/${randomUUID()}`],
  ['MCP', 'POST', '/api/mcp', mcpInitialize],
  ['Web PubSub REST', 'POST', '/webpubsub/api/hubs/chat/users/user_001/:send?api-version=2024-12-01', '{}'],
  ['offline model', 'GET', '/offline-model/v1/models'],
  ['local stats', 'GET', '/local/stats'],
  ['dead letters', 'GET', '/local/dead-letters'],
];

function expectRefused(answer: Answer, code: string): void {
  expect(answer.status, answer.body).toBe(403);
  expect(answer.contentType).toBe('application/problem+json');
  expect(JSON.parse(answer.body)).toMatchObject({ status: 403, code });
}

describe('local runtime: DNS rebinding', () => {
  it.each(surfaces)('refuses another Host on %s (403)', async (_name, method, path, body) => {
    expectRefused(
      await send(method, path, { ...DEV, host: 'evil.example', origin: 'http://evil.example' }, body),
      'host_not_allowed',
    );
    expectRefused(
      await send(method, path, { ...DEV, host: `evil.example:${port}` }, body),
      'host_not_allowed',
    );
  });

  it.each(surfaces)('refuses a page of another Origin on %s (403)', async (_name, method, path, body) => {
    expectRefused(
      await send(method, path, { ...DEV, host: `localhost:${port}`, origin: 'http://evil.example' }, body),
      'origin_not_allowed',
    );
  });

  it('deletes nothing for a rebinding page, and still serves this machine', async () => {
    const factId = `fact-${randomUUID()}`;
    await storeFacts(runtime.app.memory.facts, profileFact('user_001', factId, [factSource('s-1', 1)]));
    // The page of memories, as text: the fact's id appears in it while the fact exists.
    const memories = async () =>
      (await send('GET', '/api/memory/users/user_001/memories', { ...DEV, host: `localhost:${port}` })).body;
    expect(await memories()).toContain(factId);

    const forged = {
      ...DEV,
      host: `rebind.evil.example:${port}`,
      origin: `http://rebind.evil.example:${port}`,
    };
    expectRefused(await send('DELETE', '/api/memory/users/user_001/memories', forged), 'host_not_allowed');
    expect(await memories()).toContain(factId);
  });

  it('serves loopback names, a host LOCAL_ALLOWED_HOSTS lists, loopback pages and listed origins', async () => {
    const path = '/api/history/users/user_001/conversations';
    const cases: Record<string, string>[] = [
      { host: `localhost:${port}` },
      { host: `127.0.0.1:${port}` },
      { host: `[::1]:${port}` },
      { host: `app.localhost:${port}`, origin: 'http://app.localhost:5173' },
      { host: `devbox.internal:${port}`, origin: `http://devbox.internal:${port}` },
      { host: `localhost:${port}`, origin: 'http://localhost:5173' },
      { host: `localhost:${port}`, origin: ALLOWED_ORIGIN },
    ];
    for (const headers of cases)
      expect((await send('GET', path, { ...DEV, ...headers })).status, JSON.stringify(headers)).toBe(200);
  });

  it('refuses a WebSocket upgrade naming another Host or Origin before Web PubSub sees it', async () => {
    const upgrade = (host: string, origin: string) =>
      new Promise<string>((resolve, reject) => {
        const socket = connect(port, '127.0.0.1', () =>
          socket.write(
            [
              'GET /webpubsub/client/hubs/chat HTTP/1.1',
              `Host: ${host}`,
              `Origin: ${origin}`,
              'Connection: Upgrade',
              'Upgrade: websocket',
              'Sec-WebSocket-Version: 13',
              'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==',
              '',
              '',
            ].join('\r\n'),
          ),
        );
        let received = '';
        socket.on('data', (chunk: Buffer) => (received += chunk.toString('utf8')));
        socket.on('error', reject);
        socket.on('close', () => resolve(received));
      });
    expect(await upgrade('evil.example', 'http://evil.example')).toMatch(/^HTTP\/1\.1 403 /);
    expect(await upgrade(`localhost:${port}`, 'http://evil.example')).toMatch(/^HTTP\/1\.1 403 /);
    // A loopback upgrade reaches Web PubSub, which answers it itself (no access token here: not a 403 of ours).
    expect(await upgrade(`localhost:${port}`, `http://localhost:${port}`)).not.toMatch(/^HTTP\/1\.1 403 /);
  });
});
