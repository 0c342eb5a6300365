// Use-cases of MCP servers: a user adds, lists, changes and removes their own; the operator's (MCP_SERVERS) are
// listed beside them, read-only. Another user's server is the same 404 as none; header values never come back.
import { randomBytes } from 'node:crypto';
import { ConflictError, ForbiddenError, NotFoundError, ValidationError } from '../errors.js';
import {
  MCP_MAX_SERVERS_PER_USER,
  type CreateMcpServerBody,
  type McpServerDocument,
  type McpServerView,
  type McpToolList,
  type UpdateMcpServerBody,
} from './contracts.js';
import { McpAuthorizationRequiredError, type McpTarget } from './mcp-connector.js';
import type { OperatorMcpServer } from './settings.js';
import { operatorServersFor, type McpAudienceMember, type McpServices } from './mcp-services.js';
import { authorizationOf, withGrant } from './mcp-oauth.js';
import { needsApproval } from './approval-policy.js';
import { isOffered, modelToolNames } from './tool-names.js';

export { operatorServersFor, type McpAudienceMember, type McpServices } from './mcp-services.js';

function notFound(): NotFoundError {
  return new NotFoundError('No such MCP server.');
}

export function viewOfServer(
  server: McpServerDocument,
  authorization?: McpServerView['authorization'],
): McpServerView {
  return {
    ...(authorization === undefined ? {} : { authorization }),
    id: server.id,
    name: server.name,
    url: server.url,
    transport: server.transport,
    headerNames: server.headers.map((header) => header.name),
    tools: server.tools,
    approval: server.approval,
    enabled: server.enabled,
    owner: 'user',
    createdAt: server.createdAt,
    updatedAt: server.updatedAt,
  };
}

function viewOfOperatorServer(
  server: OperatorMcpServer,
  authorization?: McpServerView['authorization'],
): McpServerView {
  return {
    ...(authorization === undefined ? {} : { authorization }),
    id: server.id,
    name: server.name,
    url: server.url,
    transport: server.transport,
    headerNames: Object.keys(server.headers),
    tools: server.tools,
    approval: server.approval,
    enabled: true,
    owner: 'operator',
  };
}

export async function listMcpServers(
  services: McpServices,
  caller: McpAudienceMember,
): Promise<McpServerView[]> {
  const [own, grants] = await Promise.all([
    services.store.list(caller.userId),
    services.store.listOAuth(caller.userId),
  ]);
  const status = (serverId: string) => authorizationOf(grants.find((grant) => grant.serverId === serverId));
  return [
    ...operatorServersFor(services.config, caller).map((server) =>
      viewOfOperatorServer(server, status(server.id)),
    ),
    ...own.map((server) => viewOfServer(server, status(server.id))),
  ];
}

function sealHeaders(services: McpServices, serverId: string, headers: Record<string, string> | undefined) {
  return Object.entries(headers ?? {}).map(([name, value]) => ({
    name,
    value: services.box.seal(value, serverId),
  }));
}

function checkName(
  services: McpServices,
  caller: McpAudienceMember,
  name: string,
  own: McpServerDocument[],
  id?: string,
) {
  const taken =
    own.some((server) => server.name === name && server.id !== id) ||
    operatorServersFor(services.config, caller).some((server) => server.name === name);
  if (taken)
    throw new ConflictError(`An MCP server named "${name}" is already in your list: choose another name.`);
}

export async function createMcpServer(
  services: McpServices,
  caller: McpAudienceMember,
  body: CreateMcpServerBody,
): Promise<McpServerView> {
  const own = await services.store.list(caller.userId);
  if (own.length >= MCP_MAX_SERVERS_PER_USER)
    throw new ValidationError(`At most ${MCP_MAX_SERVERS_PER_USER} MCP servers per user: remove one first.`);
  checkName(services, caller, body.name, own);
  const id = `mcp-${randomBytes(8).toString('hex')}`;
  const now = (services.now?.() ?? new Date()).toISOString();
  const server: McpServerDocument = {
    id,
    kind: 'mcp-server',
    userId: caller.userId,
    name: body.name,
    url: body.url,
    transport: body.transport ?? 'streamable-http',
    headers: sealHeaders(services, id, body.headers),
    tools: body.tools ?? {},
    approval: body.approval ?? 'unless-read-only',
    enabled: body.enabled ?? true,
    createdAt: now,
    updatedAt: now,
  };
  await services.store.create(server);
  services.onChange?.(caller.userId);
  return viewOfServer(server);
}

/** The caller's own server or the operator's one they may use; anything else is the same 404. */
async function findServer(
  services: McpServices,
  caller: McpAudienceMember,
  serverId: string,
): Promise<{ own: McpServerDocument } | { operator: OperatorMcpServer }> {
  if (serverId.startsWith('mcp-op-')) {
    const operator = operatorServersFor(services.config, caller).find((server) => server.id === serverId);
    if (operator === undefined) throw notFound();
    return { operator };
  }
  const own = await services.store.get(caller.userId, serverId);
  if (own === undefined) throw notFound();
  return { own };
}

async function ownServer(services: McpServices, caller: McpAudienceMember, serverId: string) {
  const found = await findServer(services, caller, serverId);
  if ('operator' in found)
    throw new ForbiddenError("This MCP server is the operator's (MCP_SERVERS): it cannot be changed here.");
  return found.own;
}

export async function getMcpServer(
  services: McpServices,
  caller: McpAudienceMember,
  serverId: string,
): Promise<McpServerView> {
  const found = await findServer(services, caller, serverId);
  const authorization = authorizationOf((await services.store.getOAuth(caller.userId, serverId))?.grant);
  return 'own' in found
    ? viewOfServer(found.own, authorization)
    : viewOfOperatorServer(found.operator, authorization);
}

export async function updateMcpServer(
  services: McpServices,
  caller: McpAudienceMember,
  serverId: string,
  change: UpdateMcpServerBody,
): Promise<McpServerView> {
  const server = await ownServer(services, caller, serverId);
  if (change.name !== undefined && change.name !== server.name)
    checkName(services, caller, change.name, await services.store.list(caller.userId), server.id);
  const moved = (change.url !== undefined && change.url !== server.url) || change.transport !== undefined;
  const { toolList, ...kept } = server;
  const updated: McpServerDocument = {
    ...kept,
    ...(change.name === undefined ? {} : { name: change.name }),
    ...(change.url === undefined ? {} : { url: change.url }),
    ...(change.transport === undefined ? {} : { transport: change.transport }),
    ...(change.tools === undefined ? {} : { tools: change.tools }),
    ...(change.approval === undefined ? {} : { approval: change.approval }),
    ...(change.enabled === undefined ? {} : { enabled: change.enabled }),
    ...(change.headers === undefined
      ? {}
      : { headers: sealHeaders(services, server.id, change.headers ?? {}) }),
    updatedAt: (services.now?.() ?? new Date()).toISOString(),
    // Another address (or other headers) may list other tools: the cached list goes.
    ...(toolList === undefined || moved || change.headers !== undefined ? {} : { toolList }),
  };
  await services.store.replace(updated);
  // Tokens are for the resource they were issued for: a new address needs the user to connect again.
  if (change.url !== undefined && change.url !== server.url)
    await services.store.removeOAuth(caller.userId, server.id);
  services.onChange?.(caller.userId);
  return viewOfServer(
    updated,
    authorizationOf((await services.store.getOAuth(caller.userId, server.id))?.grant),
  );
}

export async function deleteMcpServer(
  services: McpServices,
  caller: McpAudienceMember,
  serverId: string,
): Promise<void> {
  await ownServer(services, caller, serverId);
  if (!(await services.store.remove(caller.userId, serverId))) throw notFound();
  await services.store.removeOAuth(caller.userId, serverId);
  services.onChange?.(caller.userId);
}

/**
 * What a stored server is reached with for its user: its header values and their OAuth grant opened (only here,
 * just before use).
 */
export function targetOfServer(services: McpServices, server: McpServerDocument): Promise<McpTarget> {
  return withGrant(services, server.userId, server.id, {
    url: server.url,
    transport: server.transport,
    headers: Object.fromEntries(
      server.headers.map(({ name, value }) => [name, services.box.open(value, server.id)]),
    ),
  });
}

/** An operator's server as one user reaches it: the operator's headers, the user's own OAuth grant. */
export function targetOfOperatorServer(
  services: McpServices,
  userId: string,
  server: OperatorMcpServer,
): Promise<McpTarget> {
  return withGrant(services, userId, server.id, {
    url: server.url,
    transport: server.transport,
    headers: server.headers,
  });
}

/** Runs a use of a server; when it asks the user to connect, that is noted (Connect shows) before the error goes on. */
export async function noteAuthorization<T>(target: McpTarget, use: () => Promise<T>): Promise<T> {
  try {
    return await use();
  } catch (error) {
    if (error instanceof McpAuthorizationRequiredError) await target.oauth?.required();
    throw error;
  }
}

function fresh(list: McpToolList | undefined, now: Date): list is McpToolList {
  return list !== undefined && new Date(list.expiresAt).getTime() > now.getTime();
}

/** The caller's "always allow" of the server's tools (GET .../approvals); 404 for a server they cannot see. */
export async function listToolGrants(services: McpServices, caller: McpAudienceMember, serverId: string) {
  await findServer(services, caller, serverId);
  return { serverId, approvals: (await services.grants?.list(caller.userId, serverId)) ?? [] };
}

/** Forgets the caller's "always allow" of one tool of the server, or of all of them (DELETE .../approvals). */
export async function revokeToolGrants(
  services: McpServices,
  caller: McpAudienceMember,
  serverId: string,
  tool?: string,
): Promise<number> {
  await findServer(services, caller, serverId);
  return (await services.grants?.revoke(caller.userId, serverId, tool)) ?? 0;
}

/** A server's tools: the cached list while it is fresh, else listed again (and cached). */
export async function mcpServerTools(services: McpServices, caller: McpAudienceMember, serverId: string) {
  const found = await findServer(services, caller, serverId);
  const now = services.now?.() ?? new Date();
  const cached = 'own' in found ? found.own.toolList : services.operatorTools.get(serverId);
  let list = cached;
  if (!fresh(cached, now)) {
    const target =
      'own' in found
        ? await targetOfServer(services, found.own)
        : await targetOfOperatorServer(services, caller.userId, found.operator);
    const { tools, listed } = await noteAuthorization(target, () =>
      services.connector.listTools(target, { timeoutMs: services.config.toolTimeoutMs }),
    );
    list = {
      tools,
      listed,
      fetchedAt: now.toISOString(),
      expiresAt: new Date(now.getTime() + services.config.toolsCacheMs).toISOString(),
    };
    if ('own' in found) await services.store.cacheTools(caller.userId, serverId, list);
    else services.operatorTools.set(serverId, list);
  }
  if (list === undefined) throw new Error('A tool list was neither cached nor listed.');
  const name = 'own' in found ? found.own.name : found.operator.name;
  const filter = 'own' in found ? found.own.tools : found.operator.tools;
  const policy = 'own' in found ? found.own.approval : found.operator.approval;
  const granted = new Set((await services.grants?.list(caller.userId, serverId))?.map((grant) => grant.tool));
  const names = modelToolNames(
    name,
    list.tools.map((tool) => tool.name),
  );
  return {
    serverId,
    tools: list.tools.map((tool) => {
      const approval = needsApproval(policy, tool) && !granted.has(tool.name);
      const offered = isOffered(filter, tool.name);
      const modelName = names.get(tool.name);
      return {
        ...tool,
        needsApproval: approval,
        offered,
        ...(offered && modelName !== undefined ? { modelName } : {}),
      };
    }),
    listed: list.listed,
    fetchedAt: list.fetchedAt,
    expiresAt: list.expiresAt,
  };
}
