import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestSseMcpServer, type TestSseMcpServer } from '../../../test/support/test-sse-mcp-server.js';
import { createSdkMcpConnector } from './sdk-mcp-connector.js';

let sse: TestSseMcpServer;
beforeAll(async () => {
  sse = await startTestSseMcpServer();
});
afterAll(() => sse.stop());

describe('the SDK connector', () => {
  const connector = createSdkMcpConnector({ allowLoopback: true, allowedHosts: [] });

  it('falls back to HTTP+SSE when a server has no Streamable HTTP endpoint (405)', async () => {
    const target = { url: sse.url, transport: 'streamable-http' as const, headers: {} };
    const { tools } = await connector.listTools(target, { timeoutMs: 5_000 });
    expect(tools).toEqual([expect.objectContaining({ name: 'shout', readOnly: true })]);
    const outcome = await connector.callTool(
      target,
      'shout',
      { text: 'hello' },
      { timeoutMs: 5_000, maxChars: 100 },
    );
    expect(outcome).toEqual({ text: 'HELLO', isError: false, truncated: false });
  });

  it('goes to HTTP+SSE at once when told the server has only that', async () => {
    const before = sse.methods.length;
    const target = { url: sse.url, transport: 'sse' as const, headers: {} };
    const outcome = await connector.callTool(
      target,
      'shout',
      { text: 'abc' },
      { timeoutMs: 5_000, maxChars: 2 },
    );
    expect(outcome).toEqual({ text: 'AB', isError: false, truncated: true });
    expect(sse.methods.slice(before)).toEqual(['initialize', 'notifications/initialized', 'tools/call']);
  });
});
