// An MCP server's Streamable HTTP endpoint as a Functions HTTP handler, through the SDK's web-standard
// handler (createMcpHandler). Stateless: a fresh server per request, made for the caller resolved as for the
// JSON endpoints (a personal API key included), so any instance serves any request.
import type { HttpHandler, HttpRequest, InvocationContext } from '@azure/functions';
import { createMcpHandler, type McpServer } from '@modelcontextprotocol/server';
import { z } from 'zod';
import { UnauthenticatedError } from '../errors.js';
import type { Caller } from '../identity/caller.js';
import { bearerChallenge } from '../identity/protected-resource.js';
import type { EndpointApp } from './endpoint.js';
import { jsonDepthGuard, readBodyBytes } from './json-body.js';
import { problemResponse, toProblemResponse } from './problem.js';
import { fromWebResponse, toWebRequest } from './web-exchange.js';

/** A JSON-RPC 2.0 response, as the endpoint answers a request (a tool's own failure is a result with isError). */
export const jsonRpcAnswerSchema = z.object({
  jsonrpc: z.literal('2.0'),
  id: z.union([z.string(), z.number(), z.null()]),
  result: z.looseObject({}).optional(),
  error: z.object({ code: z.number().int(), message: z.string(), data: z.unknown().optional() }).optional(),
});

export interface McpEndpoint<TApp extends EndpointApp> {
  /** A fresh server that answers one request for the caller. */
  server(request: { app: TApp; caller: Caller; context: InvocationContext }): McpServer;
  /**
   * The URL of the protected resource metadata, for the 401's challenge; undefined where callers do not present
   * bearer tokens (dev identities, App Service authentication), and a 401 is a plain problem.
   */
  resourceMetadataUrl(app: TApp, requestUrl: string): string | undefined;
  /** Larger POST bodies get 413 before anything is parsed. */
  maxRequestBytes: number;
}

export function mcpHttpHandler<TApp extends EndpointApp>(
  endpoint: McpEndpoint<TApp>,
  getApp: () => Promise<TApp>,
): HttpHandler {
  return async (request, context) => {
    try {
      const app = await getApp();
      let caller: Caller;
      try {
        caller = await app.identity.resolve(request.headers, { apiKeys: true });
      } catch (error) {
        const metadataUrl = endpoint.resourceMetadataUrl(app, request.url);
        if (!(error instanceof UnauthenticatedError) || metadataUrl === undefined) throw error;
        return challenge(error, request, metadataUrl);
      }
      // One SDK handler per request: it closes over the caller and this invocation's logger, and it holds
      // nothing between requests, so making one costs a few objects.
      const handler = createMcpHandler(() => endpoint.server({ app, caller, context }), {
        legacy: 'stateless',
        maxRequestBodySize: endpoint.maxRequestBytes,
        // Requests the SDK refused (a wrong protocol version, a GET of the 2025 era): the client got the answer.
        onerror: (error) => context.log(`MCP: ${error.message}`),
      });
      return fromWebResponse(
        await handler.fetch(await toGuardedWebRequest(request, endpoint.maxRequestBytes)),
      );
    } catch (error) {
      return toProblemResponse(error, context, request.url);
    }
  };
}

/**
 * The request as the SDK reads it, its body first read here under the same limits as every JSON body (size, and
 * nesting counted as it arrives), so a hostile JSON-RPC message is refused before the SDK parses it.
 */
async function toGuardedWebRequest(request: HttpRequest, maxBytes: number): Promise<Request> {
  if (request.method !== 'POST' || request.body === null) return toWebRequest(request);
  const body = await readBodyBytes(request, maxBytes, jsonDepthGuard());
  return new Request(request.url, { method: request.method, headers: request.headers, body });
}

/** 401 with `WWW-Authenticate: Bearer resource_metadata="..."` (MCP authorization, RFC 9728 §5.1). */
function challenge(error: UnauthenticatedError, request: HttpRequest, metadataUrl: string) {
  const presented = request.headers.get('authorization') !== null;
  return problemResponse(
    401,
    error.code,
    error.message,
    { instance: request.url },
    {
      'www-authenticate': bearerChallenge(
        metadataUrl,
        presented ? { description: error.message } : undefined,
      ),
    },
  );
}
