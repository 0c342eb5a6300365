// An MCP server of the older HTTP+SSE transport only, written by hand (the SDK's server no longer serves it): GET
// /sse opens the stream and names the endpoint, POST /messages answers on that stream; a POST to /sse gets 405.
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface TestSseMcpServer {
  /** The SSE endpoint's URL, as a user adds it. */
  url: string;
  /** The JSON-RPC methods received, in order. */
  methods: string[];
  stop(): Promise<void>;
}

interface JsonRpcRequest {
  id?: number | string;
  method: string;
  params?: { name?: string; arguments?: Record<string, unknown> };
}

/** One tool, `shout`, that answers its `text` in capitals. */
export async function startTestSseMcpServer(): Promise<TestSseMcpServer> {
  const streams = new Map<string, ServerResponse>();
  const methods: string[] = [];
  let next = 0;
  const answer = (request: JsonRpcRequest): unknown => {
    switch (request.method) {
      case 'initialize':
        return {
          protocolVersion: '2024-11-05',
          capabilities: { tools: {} },
          serverInfo: { name: 'sse-only', version: '1.0.0' },
        };
      case 'tools/list':
        return {
          tools: [
            {
              name: 'shout',
              description: 'Answers in capitals.',
              inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
              annotations: { readOnlyHint: true },
            },
          ],
        };
      case 'tools/call':
        return {
          content: [
            {
              type: 'text',
              text: JSON.stringify(request.params?.arguments?.text ?? '')
                .slice(1, -1)
                .toUpperCase(),
            },
          ],
        };
      default:
        return {};
    }
  };
  const http = createServer((incoming, outgoing) => {
    const url = new URL(incoming.url ?? '/', 'http://127.0.0.1');
    if (url.pathname === '/sse' && incoming.method === 'GET') {
      const session = String(next++);
      streams.set(session, outgoing);
      outgoing.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      outgoing.write(`event: endpoint\ndata: /messages?sessionId=${session}\n\n`);
      incoming.on('close', () => streams.delete(session));
      return;
    }
    if (url.pathname === '/messages' && incoming.method === 'POST') {
      const stream = streams.get(url.searchParams.get('sessionId') ?? '');
      const chunks: Buffer[] = [];
      incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
      incoming.on('end', () => {
        if (stream === undefined) return void outgoing.writeHead(404).end();
        const request = JSON.parse(Buffer.concat(chunks).toString('utf8')) as JsonRpcRequest;
        methods.push(request.method);
        outgoing.writeHead(202).end();
        if (request.id !== undefined)
          stream.write(
            `event: message\ndata: ${JSON.stringify({ jsonrpc: '2.0', id: request.id, result: answer(request) })}\n\n`,
          );
      });
      return;
    }
    outgoing.writeHead(url.pathname === '/sse' ? 405 : 404).end();
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const { port } = http.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/sse`,
    methods,
    stop: () =>
      new Promise((resolve) => {
        http.closeAllConnections();
        http.close(() => resolve());
      }),
  };
}
