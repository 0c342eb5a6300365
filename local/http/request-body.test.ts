import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readRequestBody, TOO_LARGE } from './request-body.js';

describe('readRequestBody', () => {
  let server: Server;
  let port: number;
  beforeAll(async () => {
    server = createServer((req, res) => {
      void readRequestBody(req, 1024).then((body) => {
        if (body === TOO_LARGE) res.writeHead(413).end('too large');
        else res.writeHead(200).end(`got ${body.length}`);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  /** Sends `chunks` with chunked transfer encoding: no Content-Length tells the server the size up front. */
  function post(chunks: string[]): Promise<{ status: number; text: string }> {
    return new Promise((resolve, reject) => {
      const req = request({ host: '127.0.0.1', port, method: 'POST', path: '/' }, (res) => {
        let text = '';
        res.on('data', (chunk: Buffer) => (text += chunk.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
      });
      req.on('error', reject);
      for (const chunk of chunks) req.write(chunk);
      req.end();
    });
  }

  it('returns a body within the limit', async () => {
    expect(await post(['a'.repeat(500), 'b'.repeat(500)])).toEqual({ status: 200, text: 'got 1000' });
  });

  it('lets the server answer 413 when a streamed body passes the limit part-way', async () => {
    expect(await post(['a'.repeat(800), 'b'.repeat(800), 'c'.repeat(800)])).toEqual({
      status: 413,
      text: 'too large',
    });
  });
});
