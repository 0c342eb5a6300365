// The data-plane REST API the @azure/web-pubsub SDK calls (`{prefix}/api/...`): bearer-token check, request
// parsing and validation, and the mapping of each operation onto the hub service. Errors answer in the
// service's shape, `{ code, message }`, with the code in `x-ms-error-code`.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { z } from 'zod';
import {
  AppError,
  NotFoundError,
  UnauthenticatedError,
  ValidationError,
  ensureError,
} from '../../shared/errors.js';
import { readRequestBody, TOO_LARGE } from '../http/request-body.js';
import type { AccessTokens } from './access-tokens.js';
import { groupName } from './client-messages.js';
import type { HubService } from './hub-service.js';
import { payloadFromHttpBody, type Payload } from './payload.js';
import { parsePermission, type Permission } from './permissions.js';
import { RestRoutes } from './rest-routes.js';

export interface RestContext {
  service: HubService;
  tokens: AccessTokens;
  /** Audiences a bearer token for this request may carry (the request's own URL). */
  requestAudiences(req: IncomingMessage): string[];
  /** Audience of client tokens for `hub`, as getClientAccessToken builds it. */
  clientAudience(req: IncomingMessage, hub: string): string;
  maxBodyBytes: number;
}

interface RestCall {
  req: IncomingMessage;
  params: Record<string, string>;
  query: URLSearchParams;
  ctx: RestContext;
}

interface RestResult {
  status: number;
  body?: unknown;
}

type Handler = (call: RestCall) => RestResult | Promise<RestResult>;

const accepted: RestResult = { status: 202 };
const ok: RestResult = { status: 200 };
const noContent: RestResult = { status: 204 };
const defaultCloseReason = 'The connection was closed by the server.';

// The hub name pattern the SDK itself enforces.
const hubName = /^[A-Za-z][A-Za-z0-9_`,.[\]]{0,127}$/;

const groupsBody = z.object({ groups: z.array(groupName).min(1), filter: z.string().optional() });

const routes = new RestRoutes<Handler>([
  { method: 'POST', template: 'hubs/{hub}/:send', target: sendToAll },
  { method: 'POST', template: 'hubs/{hub}/:closeConnections', target: closeAll },
  { method: 'POST', template: 'hubs/{hub}/:generateToken', target: generateToken },
  { method: 'POST', template: 'hubs/{hub}/:addToGroups', target: addToGroups },
  { method: 'POST', template: 'hubs/{hub}/:removeFromGroups', target: removeFromGroups },
  { method: 'DELETE', template: 'hubs/{hub}/connections/{connectionId}', target: closeConnection },
  { method: 'HEAD', template: 'hubs/{hub}/connections/{connectionId}', target: connectionExists },
  { method: 'POST', template: 'hubs/{hub}/connections/{connectionId}/:send', target: sendToConnection },
  {
    method: 'DELETE',
    template: 'hubs/{hub}/connections/{connectionId}/groups',
    target: removeConnectionFromAllGroups,
  },
  { method: 'HEAD', template: 'hubs/{hub}/groups/{group}', target: groupExists },
  { method: 'POST', template: 'hubs/{hub}/groups/{group}/:closeConnections', target: closeGroup },
  { method: 'POST', template: 'hubs/{hub}/groups/{group}/:send', target: sendToGroup },
  { method: 'GET', template: 'hubs/{hub}/groups/{group}/connections', target: listGroupConnections },
  {
    method: 'PUT',
    template: 'hubs/{hub}/groups/{group}/connections/{connectionId}',
    target: addConnectionToGroup,
  },
  {
    method: 'DELETE',
    template: 'hubs/{hub}/groups/{group}/connections/{connectionId}',
    target: removeConnectionFromGroup,
  },
  {
    method: 'PUT',
    template: 'hubs/{hub}/permissions/{permission}/connections/{connectionId}',
    target: grant,
  },
  {
    method: 'DELETE',
    template: 'hubs/{hub}/permissions/{permission}/connections/{connectionId}',
    target: revoke,
  },
  {
    method: 'HEAD',
    template: 'hubs/{hub}/permissions/{permission}/connections/{connectionId}',
    target: check,
  },
  { method: 'HEAD', template: 'hubs/{hub}/users/{userId}', target: userExists },
  { method: 'POST', template: 'hubs/{hub}/users/{userId}/:closeConnections', target: closeUser },
  { method: 'POST', template: 'hubs/{hub}/users/{userId}/:send', target: sendToUser },
  { method: 'DELETE', template: 'hubs/{hub}/users/{userId}/groups', target: removeUserFromAllGroups },
  { method: 'PUT', template: 'hubs/{hub}/users/{userId}/groups/{group}', target: addUserToGroup },
  { method: 'DELETE', template: 'hubs/{hub}/users/{userId}/groups/{group}', target: removeUserFromGroup },
]);

/** Serves one REST request; `apiPath` is the raw path after `{prefix}/api/`. */
export async function handleRestRequest(
  req: IncomingMessage,
  res: ServerResponse,
  apiPath: string,
  query: URLSearchParams,
  ctx: RestContext,
): Promise<void> {
  const method = req.method ?? 'GET';
  try {
    if (apiPath === 'health' && (method === 'HEAD' || method === 'GET')) {
      write(res, method, ok);
      return;
    }
    await authenticate(req, ctx);
    const match = routes.match(method, apiPath);
    if (match.kind === 'bad-encoding')
      throw new ValidationError('The request path is not valid percent-encoding.');
    if (match.kind === 'not-found')
      throw new NotFoundError(`No Web PubSub REST operation at '/api/${apiPath}'.`);
    if (match.kind === 'method-not-allowed') {
      res.setHeader('Allow', match.allowed.join(', '));
      throw new AppError(
        'method_not_allowed',
        `Use ${match.allowed.join(' or ')} for '/api/${apiPath}'.`,
        405,
      );
    }
    write(res, method, await match.target({ req, params: match.params, query, ctx }));
  } catch (error) {
    writeError(res, method, error);
  }
}

// --- handlers ----------------------------------------------------------------------------------------------

async function sendToAll(call: RestCall): Promise<RestResult> {
  rejectFilter(call.query);
  call.ctx.service.sendToAll(hub(call), await payload(call), excluded(call));
  return accepted;
}

async function sendToUser(call: RestCall): Promise<RestResult> {
  call.ctx.service.sendToUser(hub(call), userId(call), await payload(call));
  return accepted;
}

async function sendToConnection(call: RestCall): Promise<RestResult> {
  call.ctx.service.sendToConnection(hub(call), connectionId(call), await payload(call));
  return accepted;
}

async function sendToGroup(call: RestCall): Promise<RestResult> {
  rejectFilter(call.query);
  call.ctx.service.sendToGroup(hub(call), group(call), await payload(call), excluded(call));
  return accepted;
}

function closeAll(call: RestCall): RestResult {
  call.ctx.service.closeAll(hub(call), excluded(call), reason(call));
  return noContent;
}

function closeUser(call: RestCall): RestResult {
  call.ctx.service.closeUser(hub(call), userId(call), excluded(call), reason(call));
  return noContent;
}

function closeGroup(call: RestCall): RestResult {
  call.ctx.service.closeGroup(hub(call), group(call), excluded(call), reason(call));
  return noContent;
}

function closeConnection(call: RestCall): RestResult {
  call.ctx.service.closeConnection(hub(call), connectionId(call), reason(call));
  return noContent;
}

function connectionExists(call: RestCall): RestResult {
  return found(call.ctx.service.connectionExists(hub(call), connectionId(call)));
}

function userExists(call: RestCall): RestResult {
  return found(call.ctx.service.userExists(hub(call), userId(call)));
}

function groupExists(call: RestCall): RestResult {
  return found(call.ctx.service.groupExists(hub(call), group(call)));
}

function listGroupConnections(call: RestCall): RestResult {
  return { status: 200, body: { value: call.ctx.service.groupMembers(hub(call), group(call)) } };
}

function addConnectionToGroup(call: RestCall): RestResult {
  const id = connectionId(call);
  if (!call.ctx.service.addConnectionToGroup(hub(call), group(call), id)) {
    throw new NotFoundError(`Connection '${id}' does not exist.`);
  }
  return ok;
}

function removeConnectionFromGroup(call: RestCall): RestResult {
  call.ctx.service.removeConnectionFromGroup(hub(call), group(call), connectionId(call));
  return noContent;
}

function removeConnectionFromAllGroups(call: RestCall): RestResult {
  call.ctx.service.removeConnectionFromAllGroups(hub(call), connectionId(call));
  return noContent;
}

function addUserToGroup(call: RestCall): RestResult {
  call.ctx.service.addUserToGroup(hub(call), group(call), userId(call));
  return ok;
}

function removeUserFromGroup(call: RestCall): RestResult {
  call.ctx.service.removeUserFromGroup(hub(call), group(call), userId(call));
  return noContent;
}

function removeUserFromAllGroups(call: RestCall): RestResult {
  call.ctx.service.removeUserFromAllGroups(hub(call), userId(call));
  return noContent;
}

async function addToGroups(call: RestCall): Promise<RestResult> {
  const body = await groupsRequest(call);
  call.ctx.service.addConnectionsToGroups(hub(call), body.groups);
  return ok;
}

async function removeFromGroups(call: RestCall): Promise<RestResult> {
  const body = await groupsRequest(call);
  call.ctx.service.removeConnectionsFromGroups(hub(call), body.groups);
  return ok;
}

function grant(call: RestCall): RestResult {
  const id = connectionId(call);
  if (!call.ctx.service.grantPermission(hub(call), id, permission(call), targetName(call))) {
    throw new NotFoundError(`Connection '${id}' does not exist.`);
  }
  return ok;
}

function revoke(call: RestCall): RestResult {
  call.ctx.service.revokePermission(hub(call), connectionId(call), permission(call), targetName(call));
  return noContent;
}

function check(call: RestCall): RestResult {
  return found(
    call.ctx.service.checkPermission(hub(call), connectionId(call), permission(call), targetName(call)) ===
      true,
  );
}

async function generateToken(call: RestCall): Promise<RestResult> {
  const target = hub(call);
  const clientType = call.query.get('clientType');
  if (clientType !== null && clientType.toLowerCase() !== 'default') {
    throw new ValidationError(
      `clientType '${clientType}' is not supported locally: only Default clients are.`,
    );
  }
  const minutesText = call.query.get('minutesToExpire') ?? '60';
  const minutes = Number(minutesText);
  if (!Number.isInteger(minutes) || minutes < 1) {
    throw new ValidationError(`minutesToExpire must be a positive integer, got '${minutesText}'.`);
  }
  const user = call.query.get('userId');
  const token = await call.ctx.tokens.signClientToken({
    audience: call.ctx.clientAudience(call.req, target),
    ...(user ? { userId: user } : {}),
    roles: call.query.getAll('role'),
    groups: call.query.getAll('group'),
    expiresInMinutes: minutes,
  });
  return { status: 200, body: { token } };
}

// --- request parts -----------------------------------------------------------------------------------------

async function authenticate(req: IncomingMessage, ctx: RestContext): Promise<void> {
  const header = req.headers.authorization ?? '';
  const match = /^Bearer\s+(\S+)$/i.exec(header);
  if (!match) {
    throw new UnauthenticatedError('Send an Authorization: Bearer token signed with the access key.');
  }
  await ctx.tokens.verifyServiceToken(match[1]!, ctx.requestAudiences(req));
}

function hub(call: RestCall): string {
  const value = call.params['hub'] ?? '';
  if (!hubName.test(value)) {
    throw new ValidationError(
      `Hub '${value}' is not valid: start with a letter, then up to 127 letters, digits or underscores.`,
    );
  }
  return value;
}

function group(call: RestCall): string {
  const value = call.params['group'] ?? '';
  if (!groupName.safeParse(value).success) throw new ValidationError('Group names are 1 to 1024 characters.');
  return value;
}

function userId(call: RestCall): string {
  return required(call, 'userId');
}

function connectionId(call: RestCall): string {
  return required(call, 'connectionId');
}

function required(call: RestCall, name: string): string {
  const value = call.params[name] ?? '';
  if (value === '' || value.length > 1024)
    throw new ValidationError(`'${name}' must be 1 to 1024 characters.`);
  return value;
}

function permission(call: RestCall): Permission {
  const value = call.params['permission'] ?? '';
  const parsed = parsePermission(value);
  if (!parsed)
    throw new ValidationError(`Permission '${value}' is unknown: use joinLeaveGroup or sendToGroup.`);
  return parsed;
}

function targetName(call: RestCall): string | undefined {
  return call.query.get('targetName') ?? undefined;
}

function excluded(call: RestCall): Set<string> {
  return new Set(call.query.getAll('excluded'));
}

function reason(call: RestCall): string {
  return call.query.get('reason') || defaultCloseReason;
}

/** OData filters are not implemented locally: refusing them beats silently sending to the wrong audience. */
function rejectFilter(query: URLSearchParams): void {
  const filter = query.get('filter');
  if (filter !== null && filter.trim() !== '') {
    throw new AppError(
      'NotSupported',
      `The local Web PubSub does not implement OData filters (filter=${filter}); use excludedConnections, or send to a user or group.`,
      400,
    );
  }
}

async function payload(call: RestCall): Promise<Payload> {
  return payloadFromHttpBody(
    call.req.headers['content-type'],
    await readBody(call.req, call.ctx.maxBodyBytes),
  );
}

async function groupsRequest(call: RestCall): Promise<{ groups: string[] }> {
  const body = payloadFromHttpBody('application/json', await readBody(call.req, call.ctx.maxBodyBytes));
  const parsed = groupsBody.safeParse(body.data);
  if (!parsed.success) throw new ValidationError('The body must be { "groups": ["<group>", ...] }.');
  rejectFilter(new URLSearchParams(parsed.data.filter === undefined ? '' : { filter: parsed.data.filter }));
  return parsed.data;
}

async function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  const body = await readRequestBody(req, limit);
  if (body === TOO_LARGE) throw new AppError('payload_too_large', `The message exceeds ${limit} bytes.`, 413);
  return body;
}

// --- responses ---------------------------------------------------------------------------------------------

function found(exists: boolean): RestResult {
  return exists ? ok : { status: 404 };
}

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
    error instanceof AppError
      ? error
      : new AppError(
          'InternalServerError',
          `The local Web PubSub failed: ${ensureError(error).message}`,
          500,
        );
  if (!(error instanceof AppError)) console.error('Local Web PubSub REST request failed', error);
  if (res.headersSent) {
    res.destroy();
    return;
  }
  if (appError.status === 401) res.setHeader('WWW-Authenticate', 'Bearer');
  res.setHeader('x-ms-error-code', appError.code);
  write(res, method, { status: appError.status, body: { code: appError.code, message: appError.message } });
}
