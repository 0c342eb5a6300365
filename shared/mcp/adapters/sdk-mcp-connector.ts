// The MCP TypeScript SDK's client behind McpConnector: a fresh client per use over the guarded fetch, Streamable
// HTTP first and the older HTTP+SSE transport when a server answers that it has no Streamable HTTP endpoint.
import {
  auth,
  Client,
  SSEClientTransport,
  StreamableHTTPClientTransport,
  UnauthorizedError,
  type CallToolResult,
  type OAuthClientProvider,
  type Transport,
} from '@modelcontextprotocol/client';
import { ensureError } from '../../errors.js';
import {
  MCP_MAX_LISTED_TOOLS,
  MCP_MAX_TOOL_DESCRIPTION_CHARS,
  MCP_MAX_TOOL_SCHEMA_CHARS,
  type McpTool,
} from '../contracts.js';
import {
  McpAuthorizationRequiredError,
  McpCallError,
  type McpConnector,
  type McpTarget,
} from '../mcp-connector.js';
import { GrantProvider, needsRefresh, readableOAuthFailure } from './sdk-mcp-oauth.js';
import { guardedFetch, OutboundRefusedError, type AddressLookup } from './guarded-fetch.js';
import type { OutboundPolicy } from '../outbound-address.js';

/** Pages of tools/list read at most (a server that pages forever is cut). */
const MAX_LIST_PAGES = 20;
/** One answer of a server is read up to this many bytes (a 50 MB result fails readably instead). */
const MAX_RESPONSE_BYTES = 4 * 1024 * 1024;

type Fetch = ReturnType<typeof guardedFetch>;

function transportOf(
  target: McpTarget,
  kind: McpTarget['transport'],
  fetch: Fetch,
  authProvider: OAuthClientProvider | undefined,
): Transport {
  const url = new URL(target.url);
  const requestInit: RequestInit = { headers: target.headers, redirect: 'error' };
  const withAuth = authProvider === undefined ? {} : { authProvider };
  return kind === 'sse'
    ? new SSEClientTransport(url, { fetch, requestInit, ...withAuth })
    : new StreamableHTTPClientTransport(url, {
        fetch,
        requestInit,
        ...withAuth,
        // A server that closes a response's SSE stream early (SEP-1699 polling) is asked again, after the `retry`
        // it gave, with Last-Event-ID, for the result: twice at most, all within the call's deadline.
        reconnectionOptions: {
          maxReconnectionDelay: 1_000,
          initialReconnectionDelay: 200,
          reconnectionDelayGrowFactor: 2,
          maxRetries: 2,
        },
      });
}

/** What the model reads of an error: the refusal or failure itself, with the host, never a header value. */
function readable(
  error: unknown,
  target: McpTarget,
  secrets: readonly string[],
): McpCallError | McpAuthorizationRequiredError {
  if (error instanceof McpCallError || error instanceof McpAuthorizationRequiredError) return error;
  const cause = ensureError(error);
  const host = new URL(target.url).host;
  // The server still answers 401 (no token, or one it no longer takes, and no refresh helped): the user connects.
  if (target.oauth !== undefined && UnauthorizedError.isInstance(error))
    return new McpAuthorizationRequiredError(host);
  let message =
    error instanceof OutboundRefusedError
      ? error.message
      : cause.name === 'AbortError' || /timed? ?out/i.test(cause.message)
        ? `the MCP server at ${host} did not answer in time`
        : `the MCP server at ${host} failed: ${cause.message}`;
  for (const secret of secrets) if (secret.length >= 4) message = message.split(secret).join('[redacted]');
  return new McpCallError(message.slice(0, 500), { cause });
}

/** The server answered the Streamable HTTP POST with 404 or 405: it serves the older HTTP+SSE transport only. */
function noStreamableEndpoint(error: unknown): boolean {
  const status = typeof error === 'object' && error !== null && 'status' in error ? error.status : undefined;
  return status === 404 || status === 405;
}

function cut(text: string, max: number): string {
  return text.length <= max ? text : text.slice(0, max);
}

function toolOf(tool: {
  name: string;
  description?: string | undefined;
  inputSchema: Record<string, unknown>;
  annotations?: { readOnlyHint?: boolean | undefined } | undefined;
}): McpTool | undefined {
  if (JSON.stringify(tool.inputSchema).length > MCP_MAX_TOOL_SCHEMA_CHARS) return undefined;
  return {
    name: tool.name,
    ...(tool.description === undefined
      ? {}
      : { description: cut(tool.description, MCP_MAX_TOOL_DESCRIPTION_CHARS) }),
    inputSchema: tool.inputSchema,
    readOnly: tool.annotations?.readOnlyHint === true,
  };
}

/** The result as text: text parts as they are, other parts named, the whole cut to `maxChars`. */
export function resultText(result: CallToolResult, maxChars: number): { text: string; truncated: boolean } {
  const parts = result.content.map((part) => {
    switch (part.type) {
      case 'text':
        return part.text;
      case 'resource':
        return 'text' in part.resource ? part.resource.text : `[resource ${part.resource.uri}]`;
      case 'resource_link':
        return `[resource ${part.uri}]`;
      default:
        return `[${part.type} content]`;
    }
  });
  if (parts.length === 0 && result.structuredContent !== undefined)
    parts.push(JSON.stringify(result.structuredContent));
  const text = parts.join('\n');
  return { text: cut(text, maxChars), truncated: text.length > maxChars };
}

export function createSdkMcpConnector(policy: OutboundPolicy, lookup?: AddressLookup): McpConnector {
  /** Runs `use` on a connected client, closing it after; falls back to SSE when Streamable HTTP is not there. */
  async function withClient<T>(
    target: McpTarget,
    timeoutMs: number,
    signal: AbortSignal | undefined,
    use: (client: Client, deadline: AbortSignal) => Promise<T>,
  ): Promise<T> {
    // A refusal inside a body (an answer past the cap) ends the use at once, and is what the caller is told.
    let refusal: OutboundRefusedError | undefined;
    const refused = new AbortController();
    const fetch = guardedFetch(
      {
        ...policy,
        maxResponseBytes: MAX_RESPONSE_BYTES,
        onRefusal: (error) => {
          refusal = error;
          refused.abort(error);
        },
      },
      lookup,
    );
    const deadline = AbortSignal.any([
      AbortSignal.timeout(timeoutMs),
      refused.signal,
      ...(signal ? [signal] : []),
    ]);
    const host = new URL(target.url).host;
    const provider =
      target.oauth === undefined
        ? undefined
        : new GrantProvider(target.oauth.grant, {
            // Headless: a refresh needs no redirect URL, and a request for consent throws instead of redirecting.
            redirectUrl: target.oauth.grant.redirectUrl ?? 'https://localhost/no-redirect',
            interactive: false,
            host,
          });
    const secrets = [
      ...Object.values(target.headers),
      ...[provider?.grant.tokens?.access_token, provider?.grant.tokens?.refresh_token].filter(
        (value): value is string => typeof value === 'string',
      ),
    ];
    const attempt = async (kind: McpTarget['transport']) => {
      const client = new Client({ name: 'chat-backend', version: '1.0.0' });
      try {
        await client.connect(transportOf(target, kind, fetch, provider), {
          signal: deadline,
          timeout: timeoutMs,
        });
        return await use(client, deadline);
      } finally {
        await client.close().catch(() => undefined);
      }
    };
    try {
      // An access token about to expire is refreshed first, rather than spending a request on a 401.
      if (provider !== undefined && needsRefresh(provider.grant, Date.now()))
        try {
          await auth(provider, { serverUrl: target.url, fetchFn: fetch });
        } catch (error) {
          throw readableOAuthFailure(error, host);
        }
      if (target.transport === 'sse') return await attempt('sse');
      try {
        return await attempt('streamable-http');
      } catch (error) {
        // Servers of the older protocol answer a POST to their SSE endpoint with 404 or 405.
        if (deadline.aborted || error instanceof OutboundRefusedError) throw error;
        if (!noStreamableEndpoint(error)) throw error;
        return await attempt('sse');
      }
    } catch (error) {
      const cause =
        refusal ??
        (deadline.aborted && !(error instanceof OutboundRefusedError) ? new Error('timed out') : error);
      throw readable(cause, target, secrets);
    } finally {
      if (provider?.changed === true && target.oauth !== undefined) await target.oauth.save(provider.grant);
    }
  }

  return {
    listTools(target, { timeoutMs }) {
      return withClient(target, timeoutMs, undefined, async (client, deadline) => {
        const tools: McpTool[] = [];
        let listed = 0;
        let cursor: string | undefined;
        for (let page = 0; page < MAX_LIST_PAGES; page++) {
          const answer = await client.listTools(cursor === undefined ? {} : { cursor }, {
            signal: deadline,
            timeout: timeoutMs,
          });
          listed += answer.tools.length;
          for (const tool of answer.tools) {
            if (tools.length >= MCP_MAX_LISTED_TOOLS) break;
            const kept = toolOf(tool);
            if (kept !== undefined) tools.push(kept);
          }
          cursor = answer.nextCursor;
          if (cursor === undefined) break;
        }
        return { tools, listed };
      });
    },

    callTool(target, name, args, { timeoutMs, maxChars, signal }) {
      return withClient(target, timeoutMs, signal, async (client, deadline) => {
        const result = await client.callTool(
          { name, arguments: args },
          { signal: deadline, timeout: timeoutMs },
        );
        const { text, truncated } = resultText(result, maxChars);
        return { text, truncated, isError: result.isError === true };
      });
    },
  };
}
