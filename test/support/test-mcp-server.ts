// A real MCP server for tests, on loopback and a free port: the MCP TypeScript SDK's server over Streamable HTTP
// (stateless), its tools given by the test, the requests it received recorded (their headers included), and with
// `oauth` a protected resource: the SDK's metadata documents and requireBearerAuth in front of it.
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  createMcpHandler,
  getOAuthProtectedResourceMetadataUrl,
  McpServer,
  oauthMetadataResponse,
  requireBearerAuth,
  type AuthInfo,
  type OAuthMetadata,
  type OAuthTokenVerifier,
} from '@modelcontextprotocol/server';

/** The authorization server a protected MCP server names, and how it checks a bearer token. */
export interface TestMcpOAuth {
  metadata: OAuthMetadata;
  verifier: OAuthTokenVerifier;
}

export interface TestMcpServer {
  url: string;
  /** Every request's method and headers, in order. */
  requests: { method: string; headers: IncomingMessage['headers'] }[];
  /** Stops the server and drops its open connections. */
  stop(): Promise<void>;
}

/** Starts a server; `tools` registers the tools on each request's fresh McpServer. */
export async function startTestMcpServer(
  tools: (server: McpServer) => void,
  options: {
    path?: string;
    intercept?: (
      request: IncomingMessage,
    ) => { status: number; headers?: Record<string, string> } | undefined;
    /** Requires a bearer token the authorization server issued for this server (RFC 9728 discovery served). */
    oauth?: TestMcpOAuth;
  } = {},
): Promise<TestMcpServer> {
  const path = options.path ?? '/mcp';
  const handler = createMcpHandler(
    () => {
      const server = new McpServer({ name: 'test-server', version: '1.0.0' });
      tools(server);
      return server;
    },
    { legacy: 'stateless' },
  );
  const requests: TestMcpServer['requests'] = [];
  const http: Server = createServer((incoming, outgoing) => {
    requests.push({ method: incoming.method ?? 'GET', headers: incoming.headers });
    const intercepted = options.intercept?.(incoming);
    if (intercepted !== undefined) {
      outgoing.writeHead(intercepted.status, intercepted.headers).end();
      return;
    }
    const chunks: Buffer[] = [];
    incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
    incoming.on('end', () => {
      const url = `${origin}${incoming.url ?? '/'}`;
      const headers = new Headers();
      for (const [name, value] of Object.entries(incoming.headers))
        if (typeof value === 'string') headers.set(name, value);
      const method = incoming.method ?? 'GET';
      const request = new Request(url, {
        method,
        headers,
        ...(method === 'GET' || method === 'HEAD' ? {} : { body: Buffer.concat(chunks) }),
      });
      void serve(request)
        .then(async (response) => {
          outgoing.writeHead(response.status, Object.fromEntries(response.headers.entries()));
          if (response.body === null) return outgoing.end();
          const reader = response.body.getReader();
          for (;;) {
            const { done, value } = await reader.read();
            if (done) break;
            if (!outgoing.write(value)) await new Promise((resolve) => outgoing.once('drain', resolve));
          }
          outgoing.end();
        })
        .catch(() => outgoing.destroy());
    });
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const { port } = http.address() as AddressInfo;
  const origin = `http://127.0.0.1:${port}`;
  const resource = new URL(`${origin}${path}`);
  const oauth = options.oauth;
  const gate =
    oauth === undefined
      ? undefined
      : requireBearerAuth({
          verifier: oauth.verifier,
          resourceMetadataUrl: getOAuthProtectedResourceMetadataUrl(resource),
          expectedResource: resource,
        });
  async function serve(request: Request): Promise<Response> {
    if (oauth !== undefined) {
      const metadata = oauthMetadataResponse(request, {
        oauthMetadata: oauth.metadata,
        resourceServerUrl: resource,
        dangerouslyAllowInsecureIssuerUrl: true,
      });
      if (metadata !== undefined) return metadata;
    }
    if (!request.url.startsWith(resource.href)) return new Response(null, { status: 404 });
    let authInfo: AuthInfo | undefined;
    if (gate !== undefined) {
      const checked = await gate(request);
      if (checked instanceof Response) return checked;
      authInfo = checked;
    }
    return handler.fetch(request, authInfo === undefined ? undefined : { authInfo });
  }
  return {
    url: resource.href,
    requests,
    stop: () =>
      new Promise((resolve) => {
        http.closeAllConnections();
        http.close(() => resolve());
      }),
  };
}
