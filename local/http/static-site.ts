// Serves the built web client (dist/web) at `/`: its files with their content types and cache headers (text
// gzipped, as a CDN would), the page for any other path outside /api (client routes), and a CSP against inline script.
import { createReadStream } from 'node:fs';
import { readFile, realpath, stat } from 'node:fs/promises';
import { promisify } from 'node:util';
import { gzip } from 'node:zlib';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { extname, join, resolve, sep } from 'node:path';
import { problemResponse } from './problem.js';

const CONTENT_TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.webmanifest': 'application/manifest+json; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.gif': 'image/gif',
  '.webp': 'image/webp',
  '.avif': 'image/avif',
  '.ico': 'image/x-icon',
  '.woff': 'font/woff',
  '.woff2': 'font/woff2',
  '.ttf': 'font/ttf',
  '.txt': 'text/plain; charset=utf-8',
  '.wasm': 'application/wasm',
};

/** Vite names built assets `name-<hash>.ext` (a hash of 8 url-safe characters): those never change. */
const HASHED_ASSET = /-[A-Za-z0-9_-]{8,}\.[a-z0-9]+$/;

const NESTED_ASSET = /^\/.+\/assets\/([^/]+)$/;

/** Paths that belong to the API or a local service, never to the page. */
const RESERVED_PREFIXES = ['/api/', '/webpubsub/', '/offline-model/', '/local/'];

export interface StaticSiteOptions {
  /** The built client's folder (index.html and assets/). */
  root: string;
  /**
   * Origins the page signs in with (Entra ID's, when AUTH_MODE is entra): MSAL fetches tokens from them and renews
   * them in a hidden frame. Read on every page, since the runtime knows its settings only once it listens.
   */
  signInOrigins?: () => readonly string[];
  /** Other origins the page may call: the local Blob Storage its large uploads go to. */
  connectOrigins?: () => readonly string[];
}

export interface StaticSite {
  /** Answers GET and HEAD outside the reserved paths; false for everything else. */
  handleRequest(req: IncomingMessage, res: ServerResponse): Promise<boolean>;
}

/**
 * The page's CSP wherever it is served: script only from its own origin, never inline; network access only to its
 * own origin and `connectSources` (the API and Web PubSub when they live elsewhere); frames only from `frameSources`
 * (the sign-in service's silent token renewal). Styles may be inline: the Markdown renderer's highlighted code and
 * diagrams set style attributes and elements.
 */
export function contentSecurityPolicy(
  connectSources: readonly string[] = [],
  frameSources: readonly string[] = [],
): string {
  return [
    "default-src 'self'",
    "script-src 'self'",
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data: blob:",
    "font-src 'self' data:",
    ["connect-src 'self'", ...connectSources].join(' '),
    ["frame-src 'self'", ...frameSources].join(' '),
    "worker-src 'self' blob:",
    "object-src 'none'",
    "base-uri 'self'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join('; ');
}

/** A Host header that is a name or an address with an optional port, and nothing a CSP would read as syntax. */
const HOST_TOKEN =
  /^(?:[A-Za-z0-9](?:[A-Za-z0-9.-]{0,251}[A-Za-z0-9])?|\[[0-9A-Fa-f:.]{2,45}\])(?::\d{1,5})?$/;

/**
 * Locally the Web PubSub client connects back to the page's host, over ws (named: older engines do not count it as
 * 'self'). The header is the client's, so only a plain host token is copied: `Host: a;b.localhost` passes the
 * rebinding guard's `*.localhost` rule but must not add a directive of its own.
 */
function localConnectSources(host: string | undefined): string[] {
  return host === undefined || !HOST_TOKEN.test(host) ? [] : [`ws://${host}`, `wss://${host}`];
}

export function createStaticSite(options: StaticSiteOptions): StaticSite {
  const root = resolve(options.root);
  const pageCsp = (host: string | undefined) => {
    const signIn = options.signInOrigins?.() ?? [];
    const others = options.connectOrigins?.() ?? [];
    return contentSecurityPolicy([...localConnectSources(host), ...signIn, ...others], signIn);
  };
  return {
    async handleRequest(req, res) {
      if (req.method !== 'GET' && req.method !== 'HEAD') return false;
      let pathname: string;
      try {
        pathname = decodeURIComponent(new URL(req.url ?? '/', 'http://localhost').pathname);
      } catch {
        return false;
      }
      const lower = pathname.toLowerCase();
      if (lower === '/api' || RESERVED_PREFIXES.some((prefix) => lower.startsWith(prefix))) return false;

      // A path naming a file that is not there is a client route (the page handles it), unless it names an
      // asset: a missing script must fail loudly, not load the page as JavaScript.
      // The client is built with relative asset URLs, so a page loaded at a deep client route (/a/b) asks for
      // /a/assets/x.js: that is the root's assets/x.js.
      const file =
        (await resolveFile(root, pathname)) ??
        (NESTED_ASSET.test(pathname)
          ? await resolveFile(root, pathname.replace(NESTED_ASSET, '/assets/$1'))
          : undefined);
      if (file !== undefined) {
        await sendFile(req, res, file, pageCsp(req.headers.host));
        return true;
      }
      // Browsers ask every origin for it, whatever the page declares: its absence is not an error to report.
      if (lower === '/favicon.ico') {
        res.writeHead(204, { 'cache-control': 'public, max-age=86400' }).end();
        return true;
      }
      if (lower.startsWith('/assets/') || extname(pathname) !== '') {
        sendProblem(res, 404, `Nothing is served at ${pathname}.`);
        return true;
      }
      const index = await resolveFile(root, '/index.html');
      if (index === undefined) {
        sendProblem(
          res,
          404,
          `The web client is not built (no ${join(root, 'index.html')}): run \`npm run build:web\`, or \`npm start\`, ` +
            'which builds it when its sources changed. The API is under /api.',
        );
        return true;
      }
      // A shared conversation's page (/s/{shareId}) is for whoever has the link, never for search engines.
      const robots = lower.startsWith('/s/') ? { 'x-robots-tag': 'noindex, nofollow' } : {};
      await sendFile(req, res, index, pageCsp(req.headers.host), robots);
      return true;
    },
  };
}

/** The real path of a regular file inside the root, or undefined: no `..`, no NUL, no symlink out of the root. */
async function resolveFile(root: string, pathname: string): Promise<string | undefined> {
  if (pathname.includes('\0') || pathname.split(/[\\/]/).some((part) => part === '..')) return undefined;
  const relative = pathname === '/' ? 'index.html' : pathname.replace(/^\/+/, '');
  const candidate = resolve(root, relative);
  if (candidate !== root && !candidate.startsWith(root + sep)) return undefined;
  try {
    const real = await realpath(candidate);
    const realRoot = await realpath(root);
    if (!real.startsWith(realRoot + sep)) return undefined;
    const info = await stat(real);
    if (info.isDirectory()) return resolveFile(root, `${pathname.replace(/\/+$/, '')}/index.html`);
    return info.isFile() ? real : undefined;
  } catch {
    return undefined;
  }
}

/** Text compresses to a fraction (the client's scripts to about a third): sent gzipped to a browser that takes it. */
const COMPRESSIBLE = new Set([
  '.html',
  '.js',
  '.mjs',
  '.css',
  '.json',
  '.map',
  '.svg',
  '.txt',
  '.webmanifest',
]);
const gzipped = promisify(gzip);
/** Compressed once per file version: the hashed assets never change, the page changes with a build. */
const compressedCache = new Map<string, { mtimeMs: number; body: Buffer }>();

async function gzippedFile(file: string, mtimeMs: number): Promise<Buffer> {
  const cached = compressedCache.get(file);
  if (cached?.mtimeMs === mtimeMs) return cached.body;
  const body = await gzipped(await readFile(file));
  compressedCache.set(file, { mtimeMs, body });
  return body;
}

function acceptsGzip(req: IncomingMessage): boolean {
  const accepted = req.headers['accept-encoding'];
  return (
    typeof accepted === 'string' &&
    /(?:^|,)\s*gzip\s*(?:;\s*q=(?!0(?:\.0*)?\s*(?:,|$))[\d.]+)?\s*(?:,|$)/i.test(accepted)
  );
}

async function sendFile(
  req: IncomingMessage,
  res: ServerResponse,
  file: string,
  csp: string,
  headers: Record<string, string> = {},
): Promise<void> {
  const info = await stat(file);
  for (const [name, value] of Object.entries(headers)) res.setHeader(name, value);
  const extension = extname(file).toLowerCase();
  const isPage = extension === '.html';
  res.statusCode = 200;
  res.setHeader('content-type', CONTENT_TYPES[extension] ?? 'application/octet-stream');
  const compressible = COMPRESSIBLE.has(extension);
  if (compressible) res.setHeader('vary', 'accept-encoding');
  const compressed = compressible && acceptsGzip(req) ? await gzippedFile(file, info.mtimeMs) : undefined;
  if (compressed !== undefined) res.setHeader('content-encoding', 'gzip');
  res.setHeader('content-length', compressed?.length ?? info.size);
  res.setHeader('x-content-type-options', 'nosniff');
  res.setHeader('referrer-policy', 'no-referrer');
  // The page is revalidated on every load so that a new build shows at once; its hashed assets never change.
  res.setHeader(
    'cache-control',
    !isPage && HASHED_ASSET.test(file) ? 'public, max-age=31536000, immutable' : 'no-cache',
  );
  if (isPage) {
    res.setHeader('content-security-policy', csp);
    res.setHeader('x-frame-options', 'DENY');
  }
  if (req.method === 'HEAD') {
    res.end();
    return;
  }
  if (compressed !== undefined) {
    res.end(compressed);
    return;
  }
  await new Promise<void>((done) => {
    const stream = createReadStream(file);
    stream.once('error', () => {
      res.destroy();
      done();
    });
    res.once('close', () => {
      stream.destroy();
      done();
    });
    stream.pipe(res);
  });
}

function sendProblem(res: ServerResponse, status: number, detail: string): void {
  const problem = problemResponse(status, 'not_found', detail);
  res.statusCode = status;
  for (const [name, value] of Object.entries(problem.headers as Record<string, string>))
    res.setHeader(name, value);
  res.end(problem.body as string);
}
