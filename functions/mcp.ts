// MCP at /api/mcp (Streamable HTTP): the memory tools for other agents, acting for the caller resolved as for REST.
// In Entra ID mode, the protected resource metadata (RFC 9728) its 401 points at, served under /api because the
// well-known location would fall outside the host's route prefix.
import { getApp, type App } from '../shared/app/app.js';
import { NotFoundError } from '../shared/errors.js';
import { mcpHttpHandler } from '../shared/http/mcp-endpoint.js';
import {
  protectedResourceMetadata,
  protectedResourceMetadataSchema,
} from '../shared/identity/protected-resource.js';
import { jsonRpcAnswerSchema } from '../shared/http/mcp-endpoint.js';
import { createMemoryMcpServer } from '../shared/memory/memory-mcp-server.js';
import { meteredSearch } from '../shared/usage/metered-search.js';
import type { FunctionDefinition, HttpFunctionDefinition } from './definition.js';
import { endpoint, httpFunction } from './endpoint.js';

export const MCP_ROUTE = 'mcp';
export const PROTECTED_RESOURCE_METADATA_ROUTE = 'oauth-protected-resource/mcp';

/** A route's URL on the host the request came to. */
const apiUrl = (requestUrl: string, route: string) => new URL(`/api/${route}`, requestUrl).href;

/** Tool arguments are small: a search query of at most 1,000 characters is the largest. */
const MAX_MCP_REQUEST_BYTES = 64 * 1024;

export function mcpHandler(getMcpApp: () => Promise<App>) {
  return mcpHttpHandler<App>(
    {
      server: ({ app, caller, context }) =>
        createMemoryMcpServer(
          app.memory,
          caller.userId,
          (message) => context.error(message),
          (work) => meteredSearch(app.quota, caller, context, work),
        ),
      resourceMetadataUrl: (app, requestUrl) =>
        app.config.auth.mode === 'entra' ? apiUrl(requestUrl, PROTECTED_RESOURCE_METADATA_ROUTE) : undefined,
      maxRequestBytes: MAX_MCP_REQUEST_BYTES,
    },
    getMcpApp,
  );
}

const mcpFunction: HttpFunctionDefinition = {
  kind: 'http',
  name: 'mcp',
  route: MCP_ROUTE,
  // GET and DELETE reach the SDK, which answers 405 as the spec asks of a server without sessions or streams.
  methods: ['POST', 'GET', 'DELETE'],
  handler: mcpHandler(getApp),
  declaration: {
    summary:
      "MCP's Streamable HTTP, stateless: JSON-RPC requests for the memory tools (search_conversation_history, get_user_profile, delete_memory), acting for the caller.",
    auth: 'caller',
    apiKeys: true,
    responses: {
      200: 'the JSON-RPC answer (a tool error is a result with isError, not a status)',
      400: 'a body that is not a JSON-RPC message, or nested too deep',
      401: 'no identity, or an API key that is malformed, revoked or expired; in Entra ID mode with the WWW-Authenticate challenge that names the metadata',
      429: 'too many checks of unknown API keys on this instance just now (retry-after)',
      405: 'GET and DELETE: no sessions and no server-sent streams',
      413: `a body over ${MAX_MCP_REQUEST_BYTES / 1024} KiB`,
    },
    replies: { 200: jsonRpcAnswerSchema },
  },
};

export const protectedResourceMetadataEndpoint = endpoint({
  name: 'mcpProtectedResourceMetadata',
  route: PROTECTED_RESOURCE_METADATA_ROUTE,
  methods: ['GET'],
  summary:
    'Entra ID mode: the OAuth protected resource metadata of /api/mcp (RFC 9728): the tenant that issues its tokens and the scopes to ask for.',
  auth: 'anonymous',
  responses: {
    200: 'the metadata document (RFC 9728)',
    404: 'AUTH_MODE is not entra: callers are not identified by bearer tokens',
  },
  replies: { 200: protectedResourceMetadataSchema },
  handle({ app, url }) {
    const auth = app.config.auth;
    if (auth.mode !== 'entra')
      return Promise.reject(
        new NotFoundError(
          `No protected resource metadata: callers are identified by ${auth.mode === 'dev' ? 'dev identities' : 'App Service authentication'}, not bearer tokens (AUTH_MODE=entra publishes it).`,
        ),
      );
    return Promise.resolve({
      status: 200,
      body: protectedResourceMetadata(auth, apiUrl(url, MCP_ROUTE)),
      // Public and the same for every caller: clients and proxies may keep it an hour.
      headers: { 'cache-control': 'public, max-age=3600' },
    });
  },
});

export const mcpFunctions: FunctionDefinition[] = [
  mcpFunction,
  httpFunction(protectedResourceMetadataEndpoint),
];
