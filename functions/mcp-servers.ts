// MCP servers a user adds (and the operator's, listed beside them): add, list, read, change, remove, and the tools
// a server lists. Owner-only: another user's server is the same 404 as none; header values never come back.
import { z } from 'zod';
import { mcpServerIdSchema } from '../shared/ids.js';
import {
  createMcpServerBodySchema,
  mcpOAuthStartSchema,
  mcpServerListSchema,
  mcpServerToolsSchema,
  mcpServerViewSchema,
  updateMcpServerBodySchema,
} from '../shared/mcp/contracts.js';
import {
  createMcpServer,
  deleteMcpServer,
  getMcpServer,
  listMcpServers,
  listToolGrants,
  mcpServerTools,
  revokeToolGrants,
  updateMcpServer,
} from '../shared/mcp/mcp-servers.js';
import { mcpToolGrantListSchema } from '../shared/mcp/tool-grants.js';
import { disconnectMcpOAuth, finishMcpOAuth, startMcpOAuth } from '../shared/mcp/mcp-oauth.js';
import type { FunctionDefinition } from './definition.js';
import { endpoint, httpFunction } from './endpoint.js';

const serverParams = z.object({ serverId: mcpServerIdSchema });
const NO_STORE = { 'cache-control': 'no-store' } as const;
const BODY_BYTES = 48 * 1024;

export const createMcpServerEndpoint = endpoint({
  name: 'createMcpServer',
  route: 'mcp-servers',
  methods: ['POST'],
  summary:
    'Adds an MCP server {name, url, transport?, headers?, tools?: {allow?, deny?}, approval?, enabled?}: its tools ' +
    'are offered to the model in your turns. Header values (API keys) are kept sealed and never shown again.',
  auth: 'caller',
  responses: {
    201: 'the server, with its header names only',
    409: 'you already have a server of that name',
    503: 'this service has no key to seal header values (MCP_SECRETS_KEY)',
  },
  replies: { 201: mcpServerViewSchema },
  body: { schema: createMcpServerBodySchema, maxBytes: BODY_BYTES, what: 'MCP server' },
  async handle({ app, caller, body }) {
    return { status: 201, body: await createMcpServer(app.mcp, caller, body), headers: NO_STORE };
  },
});

export const listMcpServersEndpoint = endpoint({
  name: 'listMcpServers',
  route: 'mcp-servers',
  methods: ['GET'],
  summary: "The operator's MCP servers you may use (owner: operator), then yours (owner: user).",
  auth: 'caller',
  responses: { 200: '{servers: [{id, name, url, transport, headerNames, tools, approval, enabled, owner}]}' },
  replies: { 200: mcpServerListSchema },
  async handle({ app, caller }) {
    return { status: 200, body: { servers: await listMcpServers(app.mcp, caller) }, headers: NO_STORE };
  },
});

export const getMcpServerEndpoint = endpoint({
  name: 'getMcpServer',
  route: 'mcp-servers/{serverId}',
  methods: ['GET'],
  summary: 'One MCP server: yours, or one of the operator you may use.',
  auth: 'caller',
  responses: { 200: 'the server', 404: "no such server, or another user's (the same answer)" },
  replies: { 200: mcpServerViewSchema },
  params: serverParams,
  async handle({ app, caller, params }) {
    return { status: 200, body: await getMcpServer(app.mcp, caller, params.serverId), headers: NO_STORE };
  },
});

export const updateMcpServerEndpoint = endpoint({
  name: 'updateMcpServer',
  route: 'mcp-servers/{serverId}',
  methods: ['PATCH'],
  summary:
    'Changes one of your MCP servers: each field given replaces the stored one (`headers` replaces them all; null ' +
    'removes them). A new url, transport or headers drops the cached tool list.',
  auth: 'caller',
  responses: {
    200: 'the server as it is now',
    403: "an operator's server (read-only)",
    404: "no such server, or another user's",
    409: 'you already have a server of that name',
  },
  replies: { 200: mcpServerViewSchema },
  params: serverParams,
  body: { schema: updateMcpServerBodySchema, maxBytes: BODY_BYTES, what: 'MCP server change' },
  async handle({ app, caller, params, body }) {
    return {
      status: 200,
      body: await updateMcpServer(app.mcp, caller, params.serverId, body),
      headers: NO_STORE,
    };
  },
});

export const deleteMcpServerEndpoint = endpoint({
  name: 'deleteMcpServer',
  route: 'mcp-servers/{serverId}',
  methods: ['DELETE'],
  summary: 'Removes one of your MCP servers: its tools are not offered from the next turn on.',
  auth: 'caller',
  responses: {
    204: 'removed',
    403: "an operator's server (read-only)",
    404: "no such server, or another user's",
  },
  params: serverParams,
  async handle({ app, caller, params }) {
    await deleteMcpServer(app.mcp, caller, params.serverId);
    return { status: 204 };
  },
});

export const mcpServerToolsEndpoint = endpoint({
  name: 'mcpServerTools',
  route: 'mcp-servers/{serverId}/tools',
  methods: ['GET'],
  summary:
    'The tools the server lists (kept for MCP_TOOLS_CACHE_SECONDS, then listed again): each with its input schema, ' +
    'whether it is read-only, whether a call waits for your yes first (the approval policy asks it and you did not ' +
    'say "always allow"), whether it is offered and the name the model knows it by.',
  auth: 'caller',
  responses: {
    200: '{serverId, tools: [{name, description, inputSchema, readOnly, needsApproval, offered, modelName}], listed, fetchedAt, expiresAt}',
    404: "no such server, or another user's",
    502: 'the server could not be reached, refused the request, or is at an address this service does not connect to',
  },
  replies: { 200: mcpServerToolsSchema },
  params: serverParams,
  async handle({ app, caller, params }) {
    return { status: 200, body: await mcpServerTools(app.mcp, caller, params.serverId), headers: NO_STORE };
  },
});

export const listToolApprovalsEndpoint = endpoint({
  name: 'listMcpToolApprovals',
  route: 'mcp-servers/{serverId}/approvals',
  methods: ['GET'],
  summary:
    'The tools of the server whose calls you said to "always allow" (an approval answered with always: true): ' +
    'they run without asking.',
  auth: 'caller',
  responses: {
    200: '{serverId, approvals: [{serverId, tool, grantedAt}]}',
    404: "no such server, or another user's",
  },
  replies: { 200: mcpToolGrantListSchema },
  params: serverParams,
  async handle({ app, caller, params }) {
    return { status: 200, body: await listToolGrants(app.mcp, caller, params.serverId), headers: NO_STORE };
  },
});

export const revokeToolApprovalsEndpoint = endpoint({
  name: 'revokeMcpToolApprovals',
  route: 'mcp-servers/{serverId}/approvals',
  methods: ['DELETE'],
  summary:
    'Forgets your "always allow" of one tool of the server (?tool=its name on the server) or of all of them: ' +
    'their calls wait for your yes again.',
  auth: 'caller',
  responses: { 204: 'forgotten (also when there was none)', 404: "no such server, or another user's" },
  params: serverParams,
  query: z.object({ tool: z.string().min(1).max(200).optional() }),
  async handle({ app, caller, params, query }) {
    await revokeToolGrants(app.mcp, caller, params.serverId, query.tool);
    return { status: 204 };
  },
});

export const startMcpOAuthEndpoint = endpoint({
  name: 'startMcpOAuth',
  route: 'mcp-servers/{serverId}/oauth/start',
  methods: ['POST'],
  summary:
    'Starts connecting your account to an MCP server that asks for OAuth: discovery (protected resource and ' +
    'authorization server metadata), client registration where the server offers it, then the authorization URL ' +
    '(code flow with PKCE and the `resource` parameter) the page sends you to. The server sends you back to the ' +
    'callback, which keeps your tokens sealed.',
  auth: 'caller',
  responses: {
    200: '{authorizationUrl}',
    404: "no such server, or another user's",
    502: 'the server or its authorization server could not be reached, or refused',
    503: 'this service has no key to seal tokens (MCP_SECRETS_KEY)',
  },
  replies: { 200: mcpOAuthStartSchema },
  params: serverParams,
  async handle({ app, caller, params, url }) {
    return {
      status: 200,
      body: await startMcpOAuth(app.mcp, caller, params.serverId, new URL(url).origin),
      headers: NO_STORE,
    };
  },
});

const callbackQuery = z.object({
  state: z.string().max(2_048).optional(),
  code: z.string().max(4_096).optional(),
  iss: z.string().max(2_048).optional(),
  error: z.string().max(256).optional(),
  error_description: z.string().max(2_048).optional(),
});

export const mcpOAuthCallbackEndpoint = endpoint({
  name: 'mcpOAuthCallback',
  route: 'mcp-servers/{serverId}/oauth/callback',
  methods: ['GET'],
  summary:
    "Where an MCP server's authorization server sends the browser back: the state (bound to the user who started, " +
    'the server and the PKCE verifier; single use; valid 10 minutes) is checked, the code exchanged for tokens, ' +
    'and the browser sent on to the page with `?mcpOAuth=connected|failed&mcpServer={id}`.',
  auth: 'anonymous',
  responses: { 302: 'to the page, saying whether the account is connected' },
  replies: {
    302: { content: { 'text/plain': z.string().max(0).describe('no body: see the location header') } },
  },
  params: serverParams,
  query: callbackQuery,
  async handle({ app, params, query, url }) {
    const outcome = await finishMcpOAuth(
      app.mcp,
      params.serverId,
      {
        ...(query.state === undefined ? {} : { state: query.state }),
        ...(query.code === undefined ? {} : { code: query.code }),
        ...(query.iss === undefined ? {} : { iss: query.iss }),
        ...(query.error === undefined ? {} : { error: query.error }),
      },
      new URL(url).origin,
    );
    const page = new URLSearchParams({
      mcpOAuth: outcome.ok ? 'connected' : 'failed',
      mcpServer: params.serverId,
      ...(outcome.ok ? {} : { reason: outcome.reason }),
    });
    return { status: 302, headers: { ...NO_STORE, location: `/?${page.toString()}` } };
  },
});

export const disconnectMcpOAuthEndpoint = endpoint({
  name: 'disconnectMcpOAuth',
  route: 'mcp-servers/{serverId}/oauth',
  methods: ['DELETE'],
  summary: 'Forgets your OAuth tokens for an MCP server: its tools ask you to connect again.',
  auth: 'caller',
  responses: { 204: 'forgotten', 404: "no such server, or another user's" },
  params: serverParams,
  async handle({ app, caller, params }) {
    await disconnectMcpOAuth(app.mcp, caller, params.serverId);
    return { status: 204 };
  },
});

export const mcpServerFunctions: FunctionDefinition[] = [
  httpFunction(createMcpServerEndpoint),
  httpFunction(listMcpServersEndpoint),
  httpFunction(getMcpServerEndpoint),
  httpFunction(updateMcpServerEndpoint),
  httpFunction(deleteMcpServerEndpoint),
  httpFunction(mcpServerToolsEndpoint),
  httpFunction(listToolApprovalsEndpoint),
  httpFunction(revokeToolApprovalsEndpoint),
  httpFunction(startMcpOAuthEndpoint),
  httpFunction(mcpOAuthCallbackEndpoint),
  httpFunction(disconnectMcpOAuthEndpoint),
];
