// The local runtime's HTTP front door: mounts every HTTP function definition at /api/{route} and hands
// handlers the same HttpRequest / InvocationContext objects the Functions host builds, streaming response
// bodies (SSE) as they are produced, and applies CORS to them as the Function App does in Azure.
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import azureFunctions, { type LogHandler } from '@azure/functions';
import type { HttpFunctionDefinition } from '../../functions/definition.js';
import { problemResponse } from './problem.js';
import { createCorsPolicy, type CorsPolicy } from './cors.js';
import { frontDoorRefusal, type RebindingPolicy, type Refusal } from './rebinding-guard.js';
import { readRequestBody, TOO_LARGE } from './request-body.js';
import { compileRoute, matchRoute, type CompiledRoute } from './route-matcher.js';

// Under Node's ESM loader the package's classes are reachable only through its default export.
const { HttpRequest, HttpResponse, InvocationContext } = azureFunctions;
type HttpResponse = InstanceType<typeof HttpResponse>;

/** Another service sharing the port: it answers the requests under its own path and returns false for the rest. */
export interface HttpMount {
  handleRequest(req: IncomingMessage, res: ServerResponse): Promise<boolean>;
  handleUpgrade?(req: IncomingMessage, socket: Duplex, head: Buffer): boolean;
}

export interface HttpHostOptions {
  functions: readonly HttpFunctionDefinition[];
  /** Largest request body accepted, as the host's limit would (bytes). */
  maxRequestBytes: number;
  logHandler: LogHandler;
  /** Origins (or '*') whose pages may call the function routes; none when absent or empty. */
  corsAllowedOrigins?: readonly string[];
  /** Host names besides the loopback ones that requests may name (LOCAL_ALLOWED_HOSTS); none when absent. */
  allowedHosts?: readonly string[];
  /** The web client, asked after every mount for paths outside /api; absent: those paths answer 404. */
  site?: HttpMount;
}

/** The port is taken: `npm start` says so in one line instead of a stack. */
export class PortInUseError extends Error {
  constructor(
    readonly port: number,
    readonly host: string,
    options?: { cause?: unknown },
  ) {
    super(
      `Port ${port} on ${host} is already in use (is another local runtime running?): stop what listens on it, ` +
        'or set PORT in local.settings.json or the environment to another port (0 picks a free one).',
      options,
    );
    this.name = 'PortInUseError';
  }
}

export class HttpHost {
  readonly server: Server;
  private readonly routes: CompiledRoute<HttpFunctionDefinition>[];
  private readonly mounts: HttpMount[] = [];
  private readonly cors: CorsPolicy;
  private readonly rebinding: RebindingPolicy;
  private ready = false;

  constructor(private readonly options: HttpHostOptions) {
    this.cors = createCorsPolicy(options.corsAllowedOrigins ?? []);
    this.rebinding = {
      allowedHosts: options.allowedHosts ?? [],
      corsAllows: (origin) => this.cors.allows(origin),
    };
    this.routes = options.functions.map((definition) =>
      compileRoute(definition.route, definition.methods, definition),
    );
    this.server = createServer((req, res) => {
      this.handle(req, res).catch((error: unknown) => {
        options.logHandler('error', `HTTP host: ${error instanceof Error ? error.message : String(error)}`);
        if (!res.headersSent)
          void send(res, problemResponse(500, 'internal_error', 'The request failed unexpectedly.'));
        else res.destroy();
      });
    });
    this.server.on('upgrade', (req, socket, head) => {
      const refusal = this.refusal(req);
      if (refusal !== undefined) {
        socket.end(`HTTP/1.1 403 Forbidden\r\nConnection: close\r\n\r\n${refusal.detail}`);
        return;
      }
      if (!this.mounts.some((mount) => mount.handleUpgrade?.(req, socket, head) ?? false)) {
        socket.end('HTTP/1.1 404 Not Found\r\nConnection: close\r\n\r\n');
      }
    });
  }

  mount(mount: HttpMount): void {
    this.mounts.push(mount);
  }

  /** Until then, function routes answer 503: the services behind them are still starting. */
  markReady(): void {
    this.ready = true;
  }

  /** From then on, function routes answer 503: the services behind them are stopping. */
  markUnavailable(): void {
    this.ready = false;
  }

  listen(port: number, host: string): Promise<AddressInfo> {
    return new Promise((resolve, reject) => {
      const fail = (error: NodeJS.ErrnoException) =>
        reject(error.code === 'EADDRINUSE' ? new PortInUseError(port, host, { cause: error }) : error);
      this.server.once('error', fail);
      this.server.listen(port, host, () => {
        this.server.off('error', fail);
        resolve(this.server.address() as AddressInfo);
      });
    });
  }

  close(): Promise<void> {
    return new Promise((resolve) => {
      this.server.close(() => resolve());
      this.server.closeAllConnections();
    });
  }

  /** Every request, WebSocket upgrades included, passes the rebinding guard before any service sees it. */
  private refusal(req: IncomingMessage): Refusal | undefined {
    return frontDoorRefusal(
      {
        host: req.headers.host,
        origin: req.headers.origin,
        remoteAddress: req.socket.remoteAddress,
        hasPrincipalHeaders: Object.keys(req.headers).some((name) =>
          name.startsWith('x-ms-client-principal'),
        ),
      },
      this.rebinding,
    );
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    res.socket?.setNoDelay(true);
    // Listened for from the start: a client can go away while its function still runs, before any byte is sent.
    const gone = new AbortController();
    // Aborted only when the response had not finished: a finished one has nothing left to cancel, and an abort
    // (which builds a DOMException) on every request's close is measurable under load.
    res.once('close', () => {
      if (!res.writableFinished) gone.abort();
    });
    // Every service behind this port reads the request's URL: one that cannot be parsed is the client's error.
    const url = requestUrl(req);
    if (url === undefined) {
      return send(
        res,
        problemResponse(
          400,
          'bad_request',
          'The request target or the Host header is malformed: send a path such as /api/health and a host name.',
        ),
      );
    }
    const refusal = this.refusal(req);
    if (refusal !== undefined) return send(res, problemResponse(403, refusal.code, refusal.detail));
    for (const mount of this.mounts) if (await mount.handleRequest(req, res)) return;
    if (this.options.site !== undefined && (await this.options.site.handleRequest(req, res))) return;

    if (!url.pathname.toLowerCase().startsWith('/api/')) {
      return send(res, problemResponse(404, 'not_found', `Nothing is served at ${url.pathname}.`));
    }
    const origin = req.headers.origin;
    const cors = this.cors.responseHeaders(origin);
    const preflightMethod = req.headers['access-control-request-method'];
    const method = req.method === 'OPTIONS' && preflightMethod !== undefined ? preflightMethod : req.method;
    const match = matchRoute(this.routes, method ?? 'GET', url.pathname.slice('/api'.length));
    if (match.kind === 'not-found') {
      return send(res, problemResponse(404, 'not_found', `No function is mapped to ${url.pathname}.`), cors);
    }
    if (req.method === 'OPTIONS' && preflightMethod !== undefined) {
      // A preflight: answered here, as the platform answers it in Azure, never by the function.
      if (origin === undefined || !this.cors.allows(origin)) {
        return send(
          res,
          problemResponse(
            403,
            'origin_not_allowed',
            `Origin ${origin ?? '(none)'} may not call this API: add it to CORS_ALLOWED_ORIGINS.`,
          ),
          cors,
        );
      }
      const methods = match.kind === 'matched' ? match.target.methods : match.allowed;
      return send(res, { status: 204, headers: this.cors.preflightHeaders(origin, methods) });
    }
    if (match.kind === 'method-not-allowed') {
      return send(
        res,
        problemResponse(
          405,
          'method_not_allowed',
          `Use ${match.allowed.join(' or ')} on ${url.pathname}.`,
          {},
          {
            allow: match.allowed.join(', '),
          },
        ),
        cors,
      );
    }
    if (!this.ready) {
      return send(
        res,
        problemResponse(
          503,
          'unavailable',
          'The local runtime is starting or stopping.',
          {},
          { 'retry-after': '1' },
        ),
        cors,
      );
    }

    const body = await readRequestBody(req, this.options.maxRequestBytes);
    if (body === TOO_LARGE) {
      return send(
        res,
        problemResponse(
          413,
          'payload_too_large',
          `Request bodies are limited to ${this.options.maxRequestBytes} bytes.`,
        ),
        cors,
      );
    }
    const definition = match.target;
    const request = new HttpRequest({
      method: req.method ?? 'GET',
      url: url.toString(),
      headers: flattenHeaders(req),
      params: match.params,
      ...(body.length > 0 ? { body: { bytes: body } } : {}),
    });
    const context = new InvocationContext({
      invocationId: randomUUID(),
      functionName: definition.name,
      logHandler: this.options.logHandler,
    });
    const result = await definition.handler(request, context);
    await send(
      res,
      result instanceof HttpResponse ? result : new HttpResponse(result ?? { status: 204 }),
      cors,
      gone.signal,
    );
  }
}

/** The request's URL, or undefined when its target or Host header cannot make one. */
function requestUrl(req: IncomingMessage): URL | undefined {
  try {
    return new URL(req.url ?? '/', `http://${req.headers.host ?? 'localhost'}`);
  } catch {
    return undefined;
  }
}

/**
 * Writes a response; `extraHeaders` (CORS) are added to the function's own. `gone` is aborted when the client's
 * connection closes, which cancels a streamed body at once (even when it closed before the function answered).
 */
async function send(
  res: ServerResponse,
  response: HttpResponse | ConstructorParameters<typeof HttpResponse>[0],
  extraHeaders: Record<string, string> = {},
  gone?: AbortSignal,
) {
  const normalized = response instanceof HttpResponse ? response : new HttpResponse(response);
  res.statusCode = normalized.status;
  normalized.headers.forEach((value, name) => res.setHeader(name, value));
  for (const [name, value] of Object.entries(extraHeaders)) res.setHeader(name, value);
  const cookies = normalized.cookies.map((cookie) => `${cookie.name}=${cookie.value}`);
  if (cookies.length > 0) res.setHeader('set-cookie', cookies);
  const body = normalized.body;
  if (!body) {
    res.end();
    return;
  }
  const reader = (body as ReadableStream<Uint8Array>).getReader();
  // A client that goes away cancels the body, so a streaming handler stops producing and frees what it holds.
  const cancel = () => void reader.cancel().catch(() => undefined);
  if (gone?.aborted === true || res.destroyed) {
    cancel();
    res.end();
    return;
  }
  const onClose = () => {
    if (!res.writableFinished) cancel();
  };
  res.once('close', onClose);
  gone?.addEventListener('abort', onClose);
  res.flushHeaders();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      if (res.destroyed) {
        cancel();
        break;
      }
      res.write(value);
    }
  } finally {
    res.off('close', onClose);
    gone?.removeEventListener('abort', onClose);
    res.end();
  }
}

function flattenHeaders(req: IncomingMessage): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined) continue;
    headers[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  return headers;
}
