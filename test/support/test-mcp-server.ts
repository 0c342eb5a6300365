// A real MCP server for tests, on loopback and a free port: the MCP TypeScript SDK's server over Streamable HTTP
// (stateless), its tools given by the test, and the requests it received recorded (their headers included).
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createMcpHandler, McpServer } from '@modelcontextprotocol/server';

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
      const url = `http://127.0.0.1${incoming.url ?? '/'}`;
      if (!url.startsWith(`http://127.0.0.1${path}`)) {
        outgoing.writeHead(404).end();
        return;
      }
      const headers = new Headers();
      for (const [name, value] of Object.entries(incoming.headers))
        if (typeof value === 'string') headers.set(name, value);
      const method = incoming.method ?? 'GET';
      const request = new Request(url, {
        method,
        headers,
        ...(method === 'GET' || method === 'HEAD' ? {} : { body: Buffer.concat(chunks) }),
      });
      void handler
        .fetch(request)
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
  return {
    url: `http://127.0.0.1:${port}${path}`,
    requests,
    stop: () =>
      new Promise((resolve) => {
        http.closeAllConnections();
        http.close(() => resolve());
      }),
  };
}
