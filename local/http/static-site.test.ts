// The built web client as the local runtime serves it: content types, cache headers, the CSP, the page for client
// routes, and nothing outside its folder, whatever the path says.
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { contentSecurityPolicy, createStaticSite } from './static-site.js';

const PAGE =
  '<!doctype html><title>chat</title><script type="module" src="./assets/index-Ab12_x9Z.js"></script>';

let folder: string;
let server: Server;
let base: string;
let signInOrigins: string[] = [];
let connectOrigins: string[] = [];

/** A raw request: fetch would normalise `..` and percent-escapes away before they reach the server. */
function get(
  path: string,
  method = 'GET',
  headers: Record<string, string> = {},
): Promise<{ status: number; headers: Record<string, string>; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(`${base}/`, { method, path, headers }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, headers: res.headers as Record<string, string>, body }),
      );
    });
    req.on('error', reject);
    req.end();
  });
}

/** A raw request's body as bytes (a gzipped one is not text). */
function getBytes(
  path: string,
  headers: Record<string, string>,
): Promise<{ headers: Record<string, string>; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const req = request(`${base}/`, { path, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () =>
        resolve({ headers: res.headers as Record<string, string>, body: Buffer.concat(chunks) }),
      );
    });
    req.on('error', reject);
    req.end();
  });
}

beforeAll(async () => {
  folder = await mkdtemp(join(tmpdir(), 'static-site-'));
  const root = join(folder, 'web');
  await mkdir(join(root, 'assets'), { recursive: true });
  await writeFile(join(root, 'index.html'), PAGE);
  await writeFile(join(root, 'assets', 'index-Ab12_x9Z.js'), 'document.title = "ran";');
  await writeFile(join(root, 'assets', 'index-Qw34_y8X.css'), 'body{}');
  await writeFile(join(root, 'favicon.svg'), '<svg xmlns="http://www.w3.org/2000/svg"/>');
  await writeFile(join(folder, 'secret.txt'), 'outside the root');
  await symlink(join(folder, 'secret.txt'), join(root, 'linked.txt'));
  const site = createStaticSite({
    root,
    signInOrigins: () => signInOrigins,
    connectOrigins: () => connectOrigins,
  });
  server = createServer((req, res) => {
    void site.handleRequest(req, res).then((handled) => {
      if (!handled) res.writeHead(599).end('not handled');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
  await rm(folder, { recursive: true, force: true });
});

describe('the static site', () => {
  it('serves the page at / with no-cache and a CSP that forbids inline script', async () => {
    const page = await get('/');
    expect(page.status).toBe(200);
    expect(page.body).toBe(PAGE);
    expect(page.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(page.headers['cache-control']).toBe('no-cache');
    const csp = page.headers['content-security-policy'] ?? '';
    expect(csp).toContain("script-src 'self'");
    expect(csp).not.toMatch(/script-src[^;]*unsafe-inline/);
    expect(csp).toContain("frame-ancestors 'none'");
    // The Web PubSub client connects back to the same host over a WebSocket.
    expect(csp).toMatch(/connect-src 'self' ws:\/\/127\.0\.0\.1:\d+ wss:\/\/127\.0\.0\.1:\d+/);
    expect(page.headers['x-content-type-options']).toBe('nosniff');
  });

  it('lets the page reach and frame the sign-in origins it is given (MSAL under AUTH_MODE=entra)', async () => {
    signInOrigins = ['https://login.microsoftonline.com'];
    try {
      const csp = (await get('/')).headers['content-security-policy'] ?? '';
      expect(csp).toMatch(/connect-src 'self' ws:\S+ wss:\S+ https:\/\/login\.microsoftonline\.com(;|$)/);
      expect(csp).toMatch(/frame-src 'self' https:\/\/login\.microsoftonline\.com(;|$)/);
      expect(csp).toContain("script-src 'self';");
    } finally {
      signInOrigins = [];
    }
    expect((await get('/')).headers['content-security-policy']).toMatch(/frame-src 'self';/);
  });

  it('lets the page reach the local Blob Storage its large uploads go to, and not frame it', async () => {
    connectOrigins = ['https://127.0.0.1:10443'];
    try {
      const csp = (await get('/')).headers['content-security-policy'] ?? '';
      expect(csp).toMatch(/connect-src 'self' ws:\S+ wss:\S+ https:\/\/127\.0\.0\.1:10443(;|$)/);
      expect(csp).toMatch(/frame-src 'self';/);
    } finally {
      connectOrigins = [];
    }
  });

  it('copies into the CSP only a Host that is a plain host token, never one that carries CSP syntax', async () => {
    const hostile = (await get('/', 'GET', { host: 'a;script-src *.localhost' })).headers[
      'content-security-policy'
    ];
    expect(hostile).toContain("script-src 'self';");
    expect(hostile).not.toContain('*.localhost');
    expect(hostile).toMatch(/connect-src 'self';/);
    const plain = (await get('/', 'GET', { host: 'chat.localhost:7071' })).headers['content-security-policy'];
    expect(plain).toMatch(/connect-src 'self' ws:\/\/chat\.localhost:7071 wss:\/\/chat\.localhost:7071;/);
  });

  it('serves hashed assets as immutable, with their content types', async () => {
    const script = await get('/assets/index-Ab12_x9Z.js');
    expect(script.status).toBe(200);
    expect(script.headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect(script.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    const style = await get('/assets/index-Qw34_y8X.css');
    expect(style.headers['content-type']).toBe('text/css; charset=utf-8');
    // An unhashed file may change with the next build: revalidated.
    const icon = await get('/favicon.svg');
    expect(icon.headers['content-type']).toBe('image/svg+xml');
    expect(icon.headers['cache-control']).toBe('no-cache');
  });

  it("marks a shared conversation's page noindex, and only that page", async () => {
    const shared = await get('/s/AAAAAAAAAAAAAAAAAAAAAA');
    expect(shared.status).toBe(200);
    expect(shared.body).toBe(PAGE);
    expect(shared.headers['x-robots-tag']).toBe('noindex, nofollow');
    expect((await get('/')).headers['x-robots-tag']).toBeUndefined();
  });

  it('answers a client route with the page, and a missing asset with a 404 problem', async () => {
    const route = await get('/conversations/6f1c2a/edit?x=1');
    expect(route.status).toBe(200);
    expect(route.body).toBe(PAGE);
    // Its relative asset URLs, resolved against a deep route, name the root's assets.
    const nested = await get('/conversations/6f1c2a/assets/index-Ab12_x9Z.js');
    expect(nested.status).toBe(200);
    expect(nested.headers['content-type']).toBe('text/javascript; charset=utf-8');
    // Browsers ask for it unprompted: an absent icon is no error in the page's console.
    expect((await get('/favicon.ico')).status).toBe(204);
    const missing = await get('/assets/gone-12345678.js');
    expect(missing.status).toBe(404);
    expect(missing.headers['content-type']).toBe('application/problem+json');
    expect((JSON.parse(missing.body) as { code: string }).code).toBe('not_found');
  });

  it('sends text gzipped to a browser that accepts it, and as it is to one that does not', async () => {
    const script = '/assets/index-Ab12_x9Z.js';
    const plain = await get(script);
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect(plain.body).toBe('document.title = "ran";');
    expect(plain.headers.vary).toBe('accept-encoding');
    for (const accepted of ['gzip, deflate, br, zstd', 'br;q=1, gzip;q=0.8']) {
      const packed = await getBytes(script, { 'accept-encoding': accepted });
      expect(packed.headers['content-encoding'], accepted).toBe('gzip');
      expect(Number(packed.headers['content-length'])).toBe(packed.body.length);
      expect(gunzipSync(packed.body).toString('utf8')).toBe('document.title = "ran";');
    }
    for (const refused of ['br', 'gzip;q=0', 'identity'])
      expect(
        (await get(script, 'GET', { 'accept-encoding': refused })).headers['content-encoding'],
        refused,
      ).toBe(undefined);
  });

  it('answers HEAD without a body', async () => {
    const head = await get('/', 'HEAD');
    expect(head.status).toBe(200);
    expect(head.body).toBe('');
    expect(Number(head.headers['content-length'])).toBe(PAGE.length);
  });

  it('leaves /api, the local services and other methods to the host', async () => {
    for (const path of [
      '/api/health',
      '/API/chat',
      '/api',
      '/webpubsub/client/hubs/chat',
      '/offline-model/v1/x',
      '/local/stats',
      '/local/no-such-thing',
    ])
      expect((await get(path)).status, path).toBe(599);
    expect((await get('/', 'POST')).status).toBe(599);
  });

  it('never serves a file outside its folder', async () => {
    const attempts = [
      '/../secret.txt',
      '/..%2fsecret.txt',
      '/%2e%2e/secret.txt',
      '/assets/..%2f..%2fsecret.txt',
      '/..%5csecret.txt',
      '/linked.txt',
      '/%00index.html',
    ];
    for (const path of attempts) {
      const response = await get(path);
      expect(response.body, path).not.toContain('outside the root');
      // A traversal is either a 404 or the page (the URL parser resolves a plain `..` before it names a file).
      expect([200, 404], path).toContain(response.status);
      if (response.status === 200) expect(response.body, path).toBe(PAGE);
    }
  });

  it('says how to build the client when it is not built', async () => {
    const empty = await mkdtemp(join(tmpdir(), 'static-site-empty-'));
    const site = createStaticSite({ root: join(empty, 'missing') });
    const bare = createServer((req, res) => void site.handleRequest(req, res));
    await new Promise<void>((resolve) => bare.listen(0, '127.0.0.1', resolve));
    try {
      const response = await fetch(`http://127.0.0.1:${(bare.address() as AddressInfo).port}/`);
      expect(response.status).toBe(404);
      expect(((await response.json()) as { detail: string }).detail).toContain('npm run build:web');
    } finally {
      await new Promise((resolve) => bare.close(resolve));
      await rm(empty, { recursive: true, force: true });
    }
  });

  it('lets the page connect to its own origin and the sources it is given, and nowhere else', () => {
    expect(contentSecurityPolicy()).toContain("connect-src 'self'; frame-src 'self';");
    expect(contentSecurityPolicy(['https://api.example', 'wss://wps.example'])).toContain(
      "connect-src 'self' https://api.example wss://wps.example;",
    );
  });
});
