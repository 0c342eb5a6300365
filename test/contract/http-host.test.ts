// The local HTTP host hands handlers the same request objects the Functions host does and streams their
// response bodies: an SSE client sees each event as it is produced, and a client that leaves cancels it.
import type { HttpRequest, HttpResponseInit } from '@azure/functions';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { HttpFunctionDefinition } from '../../functions/definition.js';
import { HttpHost } from '../../local/http/http-host.js';
import { createLogHandler } from '../../local/log.js';

let release: () => void = () => undefined;
let cancelled: Promise<string>;
let markCancelled: (reason: string) => void;

const functions: HttpFunctionDefinition[] = [
  {
    kind: 'http',
    name: 'echo',
    route: 'echo/{id}',
    methods: ['POST'],
    handler: async (request: HttpRequest): Promise<HttpResponseInit> => ({
      jsonBody: {
        id: request.params.id,
        q: request.query.get('q'),
        header: request.headers.get('x-test'),
        body: await request.json(),
        method: request.method,
      },
    }),
  },
  {
    kind: 'http',
    name: 'events',
    route: 'events',
    methods: ['GET'],
    handler: () => {
      const encoder = new TextEncoder();
      const gate = new Promise<void>((resolve) => (release = resolve));
      const body = new ReadableStream<Uint8Array>({
        async start(controller) {
          controller.enqueue(encoder.encode('id: 1\nevent: first\ndata: {}\n\n'));
          await gate;
          controller.enqueue(encoder.encode('id: 2\nevent: second\ndata: {}\n\n'));
        },
        cancel(reason) {
          markCancelled(String(reason ?? 'cancelled'));
        },
      });
      return Promise.resolve({ headers: { 'content-type': 'text/event-stream' }, body });
    },
  },
];

describe('local HTTP host', () => {
  const host = new HttpHost({ functions, maxRequestBytes: 1024, logHandler: createLogHandler('none') });
  let url: string;

  beforeAll(async () => {
    const address = await host.listen(0, '127.0.0.1');
    url = `http://127.0.0.1:${address.port}`;
    host.markReady();
  });
  afterAll(() => host.close());

  it('passes route parameters, query, headers and body as an HttpRequest', async () => {
    const response = await fetch(`${url}/api/echo/abc?q=1`, {
      method: 'POST',
      headers: { 'x-test': 'yes', 'content-type': 'application/json' },
      body: JSON.stringify({ a: 1 }),
    });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({
      id: 'abc',
      q: '1',
      header: 'yes',
      body: { a: 1 },
      method: 'POST',
    });
  });

  it('refuses a body over the limit with 413 problem details', async () => {
    const response = await fetch(`${url}/api/echo/abc`, { method: 'POST', body: 'x'.repeat(2048) });
    expect(response.status).toBe(413);
    expect(response.headers.get('content-type')).toBe('application/problem+json');
  });

  it('streams each event as it is produced and cancels the body when the client leaves', async () => {
    cancelled = new Promise((resolve) => (markCancelled = resolve));
    const controller = new AbortController();
    const response = await fetch(`${url}/api/events`, { signal: controller.signal });
    expect(response.headers.get('content-type')).toBe('text/event-stream');
    const reader = response.body!.getReader();
    const first = await reader.read();
    // The second event is still held back by the handler: the first arrived on its own.
    expect(new TextDecoder().decode(first.value as Uint8Array)).toBe('id: 1\nevent: first\ndata: {}\n\n');
    controller.abort();
    await expect(cancelled).resolves.toBeTypeOf('string');
    release();
  });
});
