// The HTTP request listener of the local Cosmos DB server: the package's own routes and handlers over our account,
// with hooks that let TTL expiry run before a request, hold every response until the changes made so far are on
// disk (so an acknowledged write survives a crash), and count requests, bytes and request units per operation.
import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import { randomUUID } from 'node:crypto';
import { chargeAnswered, chargeBatchResults } from './request-charge.js';

import type { CosmosAccount } from './cosmosdb-server-internals.js';
import { withPartitionKey } from './cosmosdb-server-observer.js';
import type { RouteParams, Router } from './cosmosdb-server-router.js';

export interface RequestHooks {
  /** Runs before the handler, with the route's parameters (`dbId`, `collId`, `docId` where present). */
  beforeHandle(params: RouteParams): void;
  /** Resolves once every change made so far is on disk; each response waits for it. */
  durable(): Promise<void>;
  /** A request was answered: its operation (`item.create`, `item.query`, ...) and body sizes in bytes. */
  /** `container`: the collection the request named, if any; `requestUnits`: what Azure would charge for it. */
  served(
    operation: string,
    requestBytes: number,
    responseBytes: number,
    container: string | undefined,
    requestUnits: number,
  ): void;
  /** Waits before a routed request's answer goes out (the Azure latency model); absent, nothing waits. */
  delay?(req: IncomingMessage): Promise<void>;
}

export function createRequestListener(
  getAccount: () => CosmosAccount | undefined,
  router: Router,
  hooks: RequestHooks,
): RequestListener {
  return (req, res) => {
    // A batch's body is kept too: its operations' types price it.
    const received: ReceivedBody = {
      bytes: 0,
      ...(headerIsTrue(req, 'x-ms-cosmos-is-batch-request') ? { chunks: [] } : {}),
    };
    // Attached before the handler reads the body, in the same tick, so both see every chunk.
    req.on('data', (chunk: Buffer) => {
      received.bytes += chunk.length;
      received.chunks?.push(chunk);
    });
    handle(getAccount(), router, hooks, req, res, received).then(
      ({ responseBytes, requestUnits }) =>
        hooks.served(
          operationOf(req),
          received.bytes,
          responseBytes,
          collectionOf(req.url ?? ''),
          requestUnits,
        ),
      (error: unknown) => {
        console.error('local Cosmos DB: request failed', error);
        if (!res.headersSent) res.statusCode = 500;
        res.end();
      },
    );
  };
}

interface ReceivedBody {
  bytes: number;
  chunks?: Buffer[];
}

interface Answered {
  responseBytes: number;
  requestUnits: number;
}

/** Answers the request; returns the response body's size in bytes and the request's charge. */
async function handle(
  account: CosmosAccount | undefined,
  router: Router,
  hooks: RequestHooks,
  req: IncomingMessage,
  res: ServerResponse,
  received: ReceivedBody,
): Promise<Answered> {
  let body: unknown;
  const route = account ? router(req) : undefined;
  if (!account) {
    res.statusCode = 503;
    body = { code: 'ServiceUnavailable', message: 'The local Cosmos DB server is starting.' };
  } else if (!route) {
    res.statusCode = 400;
    body = { code: 'BadRequest', message: `No route for ${req.method ?? '?'} ${req.url ?? '?'}` };
  } else if (headerIsTrue(req, 'x-ms-cosmos-is-query-plan-request')) {
    // The SDK asks for a plan beside every query and uses it only when the query itself fails for want of one.
    // The package would run the whole query over the whole container to answer it; the same shape, empty, will do.
    res.statusCode = 200;
    body = { Documents: [], _count: 0 };
  } else {
    const [params, handler] = route;
    hooks.beforeHandle(params);
    try {
      body = await withPartitionKey(partitionKeyHeader(req), () => handler(account, req, res, params));
    } catch (error) {
      console.error('local Cosmos DB: handler failed', error);
      res.statusCode = 500;
      body = { code: 'InternalServerError', message: String(error) };
    }
    try {
      // A write is acknowledged only once on disk; a read waits too, so it never shows a change a crash could undo.
      await hooks.durable();
    } catch (error) {
      console.error('local Cosmos DB: saving a change failed', error);
      res.statusCode = 500;
      body = { code: 'InternalServerError', message: `The change could not be saved: ${String(error)}` };
    }
  }
  if (route && hooks.delay) await hooks.delay(req);
  return send(req, res, body, received);
}

export function partitionKeyHeader(req: IncomingMessage): string | undefined {
  const value = req.headers['x-ms-documentdb-partitionkey'];
  return Array.isArray(value) ? value[0] : value;
}

const RESOURCE_NAMES: Readonly<Record<string, string>> = {
  dbs: 'database',
  colls: 'container',
  docs: 'item',
  pkranges: 'partitionKeyRange',
  udfs: 'userDefinedFunction',
};

/** The Cosmos DB operation a request is, as `<resource>.<verb>`: `item.create`, `item.query`, `container.read`. */
export function operationOf(req: IncomingMessage): string {
  const path = (req.url ?? '/').split('?')[0] ?? '/';
  const segments = path.split('/').filter((segment) => segment !== '');
  const isFeed = segments.length % 2 === 1;
  const type =
    segments.length === 0 ? 'account' : (segments[isFeed ? segments.length - 1 : segments.length - 2] ?? '');
  const resource = RESOURCE_NAMES[type] ?? (type || 'account');
  const method = req.method ?? 'GET';
  let verb: string;
  if (method === 'GET') verb = isFeed ? 'readAll' : 'read';
  else if (method === 'POST') {
    if (
      headerIsTrue(req, 'x-ms-documentdb-isquery') ||
      req.headers['content-type'] === 'application/query+json'
    )
      verb = 'query';
    else if (headerIsTrue(req, 'x-ms-documentdb-is-upsert')) verb = 'upsert';
    else if (headerIsTrue(req, 'x-ms-cosmos-is-batch-request')) verb = 'batch';
    else verb = 'create';
  } else if (method === 'PUT') verb = 'replace';
  else verb = method.toLowerCase();
  return `${resource}.${verb}`;
}

export function headerIsTrue(req: IncomingMessage, name: string): boolean {
  const value = req.headers[name];
  const values = Array.isArray(value) ? value : [value];
  return values.some((entry) => entry?.toLowerCase() === 'true');
}

// Mirrors the package's response decoration, which the SDK relies on (etag, activity id, request charge).
function send(req: IncomingMessage, res: ServerResponse, body: unknown, received: ReceivedBody): Answered {
  const payload: unknown =
    res.statusCode > 399 && isRecord(body) && !body.message ? { ...body, message: '' } : body;
  if (isRecord(payload) && typeof payload._etag === 'string') res.setHeader('etag', payload._etag);
  res.setHeader('content-type', 'application/json');
  res.setHeader('content-location', `https://${req.headers.host ?? 'localhost'}${req.url ?? '/'}`);
  res.setHeader('x-ms-activity-id', randomUUID());
  if (req.headers['a-im'] && res.statusCode === 200) {
    if (req.headers['if-none-match']) res.statusCode = 304;
    res.setHeader('etag', '1');
  }
  // As Cosmos DB does: a point read whose If-None-Match names the current version answers 304 without the item,
  // and a write sent with `Prefer: return=minimal` (contentResponseOnWriteEnabled: false) answers without it.
  const unchanged =
    req.method === 'GET' &&
    res.statusCode === 200 &&
    isRecord(payload) &&
    typeof payload._etag === 'string' &&
    req.headers['if-none-match'] === payload._etag;
  // A batch answers its operations' statuses whatever it is asked (atomic-batch.ts leaves out their documents).
  const minimal =
    req.method !== 'GET' &&
    res.statusCode < 300 &&
    req.headers.prefer === 'return=minimal' &&
    !headerIsTrue(req, 'x-ms-documentdb-isquery') &&
    !headerIsTrue(req, 'x-ms-cosmos-is-batch-request');
  if (unchanged) res.statusCode = 304;
  // Before the body is written: each result of a batch carries its own charge.
  const batch =
    received.chunks && Array.isArray(payload) ? chargeBatchResults(received.chunks, payload) : undefined;
  const text = unchanged || minimal ? '' : (JSON.stringify(payload) ?? '');
  const responseBytes = Buffer.byteLength(text);
  const requestUnits = chargeAnswered({
    operation: operationOf(req),
    statusCode: res.statusCode,
    payload,
    requestBytes: received.bytes,
    responseBytes,
    minimal,
    queryPlan: headerIsTrue(req, 'x-ms-cosmos-is-query-plan-request'),
    ...(batch ? { batch } : {}),
  });
  res.setHeader('x-ms-request-charge', String(requestUnits));
  res.end(text);
  return { responseBytes, requestUnits };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The collection a request's path names (`/dbs/{db}/colls/{coll}/...`), decoded. */
function collectionOf(url: string): string | undefined {
  const match = /\/colls\/([^/?]+)/.exec(url);
  return match?.[1] === undefined ? undefined : decodeURIComponent(match[1]);
}
