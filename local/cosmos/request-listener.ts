// The HTTP request listener of the local Cosmos DB server: the package's own routes and handlers over our
// account, with hooks that let TTL expiry run before a request and persistence follow a write.
import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import { randomUUID } from 'node:crypto';

import type { CosmosAccount, RouteParams, Router } from './cosmosdb-server-internals.js';
import { contentLength, cosmosOperation, type CosmosRequestStats } from './request-stats.js';

export interface RequestHooks {
  /** Runs before the handler, with the route's parameters (`dbId`, `collId`, `docId` where present). */
  beforeHandle(params: RouteParams): void;
  /** Runs after a request that may have changed data has succeeded. */
  afterWrite(params: RouteParams): void;
}

export function createRequestListener(
  getAccount: () => CosmosAccount | undefined,
  router: Router,
  hooks: RequestHooks,
  stats?: CosmosRequestStats,
): RequestListener {
  return (req, res) => {
    handle(getAccount(), router, hooks, req, res, stats).catch((error: unknown) => {
      console.error('local Cosmos DB: request failed', error);
      if (!res.headersSent) res.statusCode = 500;
      res.end();
    });
  };
}

async function handle(
  account: CosmosAccount | undefined,
  router: Router,
  hooks: RequestHooks,
  req: IncomingMessage,
  res: ServerResponse,
  stats: CosmosRequestStats | undefined,
): Promise<void> {
  let body: unknown;
  const route = account ? router(req) : undefined;
  if (!account) {
    res.statusCode = 503;
    body = { code: 'ServiceUnavailable', message: 'The local Cosmos DB server is starting.' };
  } else if (!route) {
    res.statusCode = 400;
    body = { code: 'BadRequest', message: `No route for ${req.method ?? '?'} ${req.url ?? '?'}` };
  } else {
    const [params, handler] = route;
    hooks.beforeHandle(params);
    try {
      body = await handler(account, req, res, params);
    } catch (error) {
      console.error('local Cosmos DB: handler failed', error);
      res.statusCode = 500;
      body = { code: 'InternalServerError', message: String(error) };
    }
    if (isWrite(req) && res.statusCode < 400) hooks.afterWrite(params);
  }
  const sent = send(req, res, body);
  stats?.record(cosmosOperation(req, route?.[0]), contentLength(req), sent);
}

function isWrite(req: IncomingMessage): boolean {
  const method = req.method ?? 'GET';
  if (method === 'GET' || method === 'HEAD') return false;
  const isQuery =
    method === 'POST' &&
    (headerIsTrue(req, 'x-ms-documentdb-isquery') ||
      req.headers['content-type'] === 'application/query+json');
  return !isQuery;
}

function headerIsTrue(req: IncomingMessage, name: string): boolean {
  const value = req.headers[name];
  const values = Array.isArray(value) ? value : [value];
  return values.some((entry) => entry?.toLowerCase() === 'true');
}

// Mirrors the package's response decoration, which the SDK relies on (etag, activity id, request charge).
/** Returns the bytes of the body sent. */
function send(req: IncomingMessage, res: ServerResponse, body: unknown): number {
  const payload: unknown =
    res.statusCode > 399 && isRecord(body) && !body.message ? { ...body, message: '' } : body;
  if (isRecord(payload) && typeof payload._etag === 'string') res.setHeader('etag', payload._etag);
  res.setHeader('content-type', 'application/json');
  res.setHeader('content-location', `https://${req.headers.host ?? 'localhost'}${req.url ?? '/'}`);
  res.setHeader('x-ms-activity-id', randomUUID());
  res.setHeader('x-ms-request-charge', '1');
  if (req.headers['a-im'] && res.statusCode === 200) {
    if (req.headers['if-none-match']) res.statusCode = 304;
    res.setHeader('etag', '1');
  }
  const text = JSON.stringify(payload);
  res.end(text);
  return Buffer.byteLength(text ?? '');
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
