// The data-plane REST API the app's @azure/web-pubsub client calls (`{prefix}/api/...`): send to a user or a
// group, add/remove a connection to/from a group, and groupExists (also the app's health probe). Bearer-token check, request parsing and validation; errors answer in the
// service's shape, `{ code, message }`, with the code in `x-ms-error-code`. Other operations answer 404.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { InvalidRequestError, NotFoundError, UnauthorizedError, WebPubSubRestError } from './rest-errors.js';
import { readRequestBody, TOO_LARGE } from '../http/request-body.js';
import type { AccessTokens } from './access-tokens.js';
import type { HubService } from './hub-service.js';
import { payloadFromHttpBody, type Payload } from './payload.js';
import { RestRoutes } from './rest-routes.js';

export interface RestContext {
  service: HubService;
  tokens: AccessTokens;
  /** Audiences a bearer token for this request may carry (the request's own URL). */
  requestAudiences(req: IncomingMessage): string[];
  maxBodyBytes: number;
}

interface RestCall {
  req: IncomingMessage;
  params: Record<string, string>;
  ctx: RestContext;
}

interface RestResult {
  status: number;
  body?: unknown;
}

type Handler = (call: RestCall) => RestResult | Promise<RestResult>;

// The hub name pattern the SDK itself enforces.
const hubName = /^[A-Za-z][A-Za-z0-9_`,.[\]]{0,127}$/;

const routes = new RestRoutes<Handler>([
  { method: 'POST', template: 'hubs/{hub}/users/{userId}/:send', target: sendToUser },
  { method: 'HEAD', template: 'hubs/{hub}/groups/{group}', target: groupExists },
  { method: 'POST', template: 'hubs/{hub}/groups/{group}/:send', target: sendToGroup },
  { method: 'DELETE', template: 'hubs/{hub}/connections/{connectionId}', target: closeConnection },
  { method: 'PUT', template: 'hubs/{hub}/groups/{group}/connections/{connectionId}', target: addToGroup },
  {
    method: 'DELETE',
    template: 'hubs/{hub}/groups/{group}/connections/{connectionId}',
    target: removeFromGroup,
  },
]);

const SERVED =
  'sendToUser, sendToGroup, addConnectionToGroup, removeConnectionFromGroup, closeConnection and groupExists';

/** Serves one REST request; `apiPath` is the raw path after `{prefix}/api/`. */
export async function handleRestRequest(
  req: IncomingMessage,
  res: ServerResponse,
  apiPath: string,
  ctx: RestContext,
): Promise<void> {
  const method = req.method ?? 'GET';
  try {
    await authenticate(req, ctx);
    const match = routes.match(method, apiPath);
    if (match.kind === 'bad-encoding')
      throw new InvalidRequestError('The request path is not valid percent-encoding.');
    if (match.kind === 'not-found')
      throw new NotFoundError(
        `No Web PubSub REST operation at '/api/${apiPath}': the local Web PubSub serves ${SERVED} only.`,
      );
    if (match.kind === 'method-not-allowed') {
      res.setHeader('Allow', match.allowed.join(', '));
      throw new WebPubSubRestError(
        'method_not_allowed',
        `Use ${match.allowed.join(' or ')} for '/api/${apiPath}'.`,
        405,
      );
    }
    write(res, method, await match.target({ req, params: match.params, ctx }));
  } catch (error) {
    writeError(res, method, error);
  }
}

// --- handlers ----------------------------------------------------------------------------------------------

async function sendToUser(call: RestCall): Promise<RestResult> {
  call.ctx.service.sendToUser(hub(call), userId(call), await payload(call));
  return { status: 202 };
}

/** A group exists while a connection is in it: 200, else 404. */
function groupExists(call: RestCall): RestResult {
  return { status: call.ctx.service.groupExists(hub(call), group(call)) ? 200 : 404 };
}

async function sendToGroup(call: RestCall): Promise<RestResult> {
  const query = new URL(call.req.url ?? '/', 'http://local').searchParams;
  if (query.has('filter'))
    throw new InvalidRequestError("The local Web PubSub does not evaluate 'filter': send without it.");
  call.ctx.service.sendToGroup(hub(call), group(call), await payload(call), query.getAll('excluded'));
  return { status: 202 };
}

/** Ends a connection for good, telling the client why (`reason`); one that is already gone is closed too. */
function closeConnection(call: RestCall): RestResult {
  const reason =
    new URL(call.req.url ?? '/', 'http://local').searchParams.get('reason') ?? 'Closed by the server.';
  call.ctx.service.closeConnection(hub(call), connectionId(call), reason);
  return { status: 204 };
}

function addToGroup(call: RestCall): RestResult {
  const id = connectionId(call);
  if (!call.ctx.service.addToGroup(hub(call), group(call), id))
    throw new NotFoundError(`No connection '${id}' in this hub.`);
  return { status: 200 };
}

function removeFromGroup(call: RestCall): RestResult {
  call.ctx.service.removeFromGroup(hub(call), group(call), connectionId(call));
  return { status: 204 };
}

// --- request parts -----------------------------------------------------------------------------------------

async function authenticate(req: IncomingMessage, ctx: RestContext): Promise<void> {
  const header = req.headers.authorization ?? '';
  const match = /^Bearer\s+(\S+)$/i.exec(header);
  if (!match) {
    throw new UnauthorizedError('Send an Authorization: Bearer token signed with the access key.');
  }
  await ctx.tokens.verifyServiceToken(match[1]!, ctx.requestAudiences(req));
}

function hub(call: RestCall): string {
  const value = call.params['hub'] ?? '';
  if (!hubName.test(value)) {
    throw new InvalidRequestError(
      `Hub '${value}' is not valid: start with a letter, then up to 127 letters, digits or underscores.`,
    );
  }
  return value;
}

function userId(call: RestCall): string {
  const value = call.params['userId'] ?? '';
  if (value === '' || value.length > 1024)
    throw new InvalidRequestError(`'userId' must be 1 to 1024 characters.`);
  return value;
}

function group(call: RestCall): string {
  const value = call.params['group'] ?? '';
  if (value === '' || value.length > 1024)
    throw new InvalidRequestError(`'group' must be 1 to 1024 characters.`);
  return value;
}

function connectionId(call: RestCall): string {
  const value = call.params['connectionId'] ?? '';
  if (value === '') throw new InvalidRequestError(`'connectionId' must not be empty.`);
  return value;
}

async function payload(call: RestCall): Promise<Payload> {
  const limit = call.ctx.maxBodyBytes;
  const body = await readRequestBody(call.req, limit);
  if (body === TOO_LARGE)
    throw new WebPubSubRestError('payload_too_large', `The message exceeds ${limit} bytes.`, 413);
  return payloadFromHttpBody(call.req.headers['content-type'], body);
}

// --- responses ---------------------------------------------------------------------------------------------

function write(res: ServerResponse, method: string, result: RestResult): void {
  if (result.body === undefined || method === 'HEAD') {
    res.writeHead(result.status, { 'Content-Length': '0' }).end();
    return;
  }
  const text = JSON.stringify(result.body);
  res
    .writeHead(result.status, {
      'Content-Type': 'application/json; charset=utf-8',
      'Content-Length': String(Buffer.byteLength(text)),
    })
    .end(text);
}

function writeError(res: ServerResponse, method: string, error: unknown): void {
  const appError =
    error instanceof WebPubSubRestError
      ? error
      : new WebPubSubRestError(
          'InternalServerError',
          `The local Web PubSub failed: ${error instanceof Error ? error.message : String(error)}`,
          500,
        );
  if (!(error instanceof WebPubSubRestError)) console.error('Local Web PubSub REST request failed', error);
  if (res.headersSent) {
    res.destroy();
    return;
  }
  if (appError.status === 401) res.setHeader('WWW-Authenticate', 'Bearer');
  res.setHeader('x-ms-error-code', appError.code);
  write(res, method, { status: appError.status, body: { code: appError.code, message: appError.message } });
}
