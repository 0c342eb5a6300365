// The local HTTP host as a browser and a sloppy client meet it: CORS as the function app applies it in Azure
// (preflights answered by the host, CORS headers on answers to allowed origins, streams included, and none for
// other origins), a malformed Host header or request target answered 400, and a taken port named.
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { HttpFunctionDefinition } from '../../functions/definition.js';
import { HttpHost, PortInUseError } from '../../local/http/http-host.js';
import { createLogHandler } from '../../local/log.js';

const ALLOWED = 'http://app.localhost:5173';

const functions: HttpFunctionDefinition[] = [
  {
    kind: 'http',
    name: 'chat',
    route: 'chat',
    methods: ['POST'],
    handler: () =>
      Promise.resolve({ status: 202, headers: { location: '/api/stream/x' }, jsonBody: { ok: true } }),
  },
  {
    kind: 'http',
    name: 'events',
    route: 'events',
    methods: ['GET'],
    handler: () =>
      Promise.resolve({
        headers: { 'content-type': 'text/event-stream' },
        body: new ReadableStream<Uint8Array>({
          start(controller) {
            controller.enqueue(new TextEncoder().encode('id: 1\nevent: content\ndata: {}\n\n'));
            controller.close();
          },
        }),
      }),
  },
];

function startHost(corsAllowedOrigins: string[]): { host: HttpHost; url: () => string } {
  const host = new HttpHost({
    functions,
    maxRequestBytes: 1024,
    logHandler: createLogHandler('none'),
    corsAllowedOrigins,
  });
  let url = '';
  beforeAll(async () => {
    const address = await host.listen(0, '127.0.0.1');
    url = `http://127.0.0.1:${address.port}`;
    host.markReady();
  });
  afterAll(() => host.close());
  return { host, url: () => url };
}

const corsHeaders = (headers: Headers) =>
  [...headers.keys()].filter((name) => name.startsWith('access-control-')).sort();

describe('local HTTP host: CORS for listed origins', () => {
  const { url } = startHost([ALLOWED]);

  it('answers a preflight from an allowed origin itself: methods, the headers the app reads, max-age', async () => {
    const response = await fetch(`${url()}/api/chat`, {
      method: 'OPTIONS',
      headers: {
        origin: ALLOWED,
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'content-type, x-ms-client-principal-id',
      },
    });
    expect(response.status).toBe(204);
    expect(response.headers.get('access-control-allow-origin')).toBe(ALLOWED);
    expect(response.headers.get('access-control-allow-methods')).toBe('POST, OPTIONS');
    const allowed = response.headers.get('access-control-allow-headers')?.split(', ') ?? [];
    for (const header of ['content-type', 'authorization', 'x-ms-client-principal-id', 'last-event-id'])
      expect(allowed).toContain(header);
    expect(response.headers.get('access-control-max-age')).toBe('600');
    expect(response.headers.get('vary')).toBe('Origin');
  });

  it('adds the CORS headers to answers, streams included, and exposes location', async () => {
    const posted = await fetch(`${url()}/api/chat`, { method: 'POST', headers: { origin: ALLOWED } });
    expect(posted.status).toBe(202);
    expect(posted.headers.get('access-control-allow-origin')).toBe(ALLOWED);
    expect(posted.headers.get('access-control-expose-headers')).toContain('location');
    expect(posted.headers.get('vary')).toBe('Origin');
    const stream = await fetch(`${url()}/api/events`, { headers: { origin: ALLOWED } });
    expect(stream.headers.get('access-control-allow-origin')).toBe(ALLOWED);
    expect(await stream.text()).toContain('event: content');
    // Problems too, so a page can read why it was refused.
    const wrongMethod = await fetch(`${url()}/api/chat`, { headers: { origin: ALLOWED } });
    expect(wrongMethod.status).toBe(405);
    expect(wrongMethod.headers.get('access-control-allow-origin')).toBe(ALLOWED);
  });

  it('gives another origin no CORS headers at all, and refuses its preflight', async () => {
    const other = 'http://evil.localhost:8080';
    const preflight = await fetch(`${url()}/api/chat`, {
      method: 'OPTIONS',
      headers: { origin: other, 'access-control-request-method': 'POST' },
    });
    expect(preflight.status).toBe(403);
    expect(corsHeaders(preflight.headers)).toEqual([]);
    expect(await preflight.json()).toMatchObject({ code: 'origin_not_allowed' });
    const posted = await fetch(`${url()}/api/chat`, { method: 'POST', headers: { origin: other } });
    expect(posted.status).toBe(202);
    expect(corsHeaders(posted.headers)).toEqual([]);
    expect(posted.headers.get('vary')).toBe('Origin');
  });

  it('treats an OPTIONS that is not a preflight as any other method', async () => {
    const response = await fetch(`${url()}/api/chat`, { method: 'OPTIONS', headers: { origin: ALLOWED } });
    expect(response.status).toBe(405);
  });
});

describe('local HTTP host: CORS off and *', () => {
  const off = startHost([]);
  const any = startHost(['*']);

  it('has no CORS without origins, as in Azure by default', async () => {
    const preflight = await fetch(`${off.url()}/api/chat`, {
      method: 'OPTIONS',
      headers: { origin: ALLOWED, 'access-control-request-method': 'POST' },
    });
    expect(preflight.status).toBe(403);
    const posted = await fetch(`${off.url()}/api/chat`, { method: 'POST', headers: { origin: ALLOWED } });
    expect(corsHeaders(posted.headers)).toEqual([]);
  });

  it('lets any origin call with *', async () => {
    const posted = await fetch(`${any.url()}/api/chat`, {
      method: 'POST',
      headers: { origin: 'http://anything.localhost' },
    });
    expect(posted.headers.get('access-control-allow-origin')).toBe('*');
  });
});

/** Sends raw bytes (a request no HTTP client would build) and gives the status line and body. */
function sendRaw(url: string, text: string): Promise<{ status: number; body: string }> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => socket.end(text));
    let received = '';
    socket.on('data', (chunk: Buffer) => (received += chunk.toString('utf8')));
    socket.on('error', reject);
    socket.on('close', () => {
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(received)?.[1] ?? NaN);
      resolve({ status, body: received.slice(received.indexOf('\r\n\r\n') + 4) });
    });
  });
}

describe('local HTTP host: malformed requests and a taken port', () => {
  const { url } = startHost([]);

  it('answers a malformed Host header or request target with 400 problem+json, not 500', async () => {
    for (const request of [
      'GET /api/chat HTTP/1.1\r\nHost: [bad\r\nConnection: close\r\n\r\n',
      'GET http://[::1/api/chat HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n',
    ]) {
      const { status, body } = await sendRaw(url(), request);
      expect(status).toBe(400);
      expect(body).toContain('"code":"bad_request"');
    }
  });

  it('names a taken port and the PORT setting', async () => {
    const port = Number(new URL(url()).port);
    const second = new HttpHost({ functions, maxRequestBytes: 1024, logHandler: createLogHandler('none') });
    const error = await second.listen(port, '127.0.0.1').then(
      () => undefined,
      (reason: unknown) => reason,
    );
    expect(error).toBeInstanceOf(PortInUseError);
    expect((error as Error).message).toMatch(
      new RegExp(`^Port ${port} on 127\\.0\\.0\\.1 is already in use.*PORT`),
    );
  });
});
