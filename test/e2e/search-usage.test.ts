// What searches and ingestions cost, end to end over the local runtime: each search (REST and MCP) adds a recorded
// embedding call, a user whose day's tokens are spent is refused every search, and each ingestion of a file
// uploaded, deleted and uploaded again is recorded.
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalRuntime } from '../../local/runtime.js';
import type { DocumentView } from '../../shared/knowledge/contracts.js';
import type { UsageReport } from '../../shared/usage/contracts.js';
import { settle, startTestRuntime } from '../support/local-runtime.js';

/** user_001 is exempt from the limits (still counted); user_002 may use a few tokens a day. */
const TOKENS_PER_DAY = 50;
let runtime: LocalRuntime;
beforeAll(async () => {
  runtime = await startTestRuntime({
    settings: { QUOTA_TOKENS_PER_DAY: String(TOKENS_PER_DAY), QUOTA_EXEMPT: 'user_001' },
  });
}, 60_000);
afterAll(async () => {
  await runtime?.stop();
});

const as = (userId: string, path: string, init: RequestInit = {}) =>
  fetch(`${runtime.url}${path}`, {
    ...init,
    headers: { 'x-ms-client-principal-id': userId, 'content-type': 'application/json', ...init.headers },
  });

const post = (userId: string, path: string, body: unknown) =>
  as(userId, path, { method: 'POST', body: JSON.stringify(body) });

async function usage(userId: string): Promise<UsageReport> {
  const reply = await as(userId, `/api/usage/users/${userId}`);
  expect(reply.status).toBe(200);
  return (await reply.json()) as UsageReport;
}

async function mcpSearch(userId: string, query: string) {
  const client = new Client({ name: 'e2e', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${runtime.url}/api/mcp`), {
      requestInit: { headers: { 'x-ms-client-principal-id': userId } },
    }),
  );
  try {
    return await client.callTool({
      name: 'search_conversation_history',
      arguments: { search_query: query, limit: 3 },
    });
  } finally {
    await client.close();
  }
}

describe('searches', () => {
  it('each add a recorded embedding call, over REST and MCP', async () => {
    const before = (await usage('user_001')).backgroundByKind['embedding']?.calls ?? 0;
    for (let i = 0; i < 3; i += 1) {
      expect((await post('user_001', '/api/knowledge/search', { query: `tide tables ${i}` })).status).toBe(
        200,
      );
      const memory = await post('user_001', '/api/memory/users/user_001/conversations/search', {
        query: `sailing ${i}`,
      });
      expect(memory.status).toBe(200);
      expect((await mcpSearch('user_001', `risotto ${i}`)).isError).toBeFalsy();
    }
    const after = (await usage('user_001')).backgroundByKind['embedding'];
    expect(after?.calls).toBe(before + 9);
    expect(after?.inputTokens).toBeGreaterThan(0);
  }, 60_000);

  it("are refused once the day's tokens are spent: 429 over REST, a tool error over MCP", async () => {
    const long = 'How long does the keeper read the tide tables each dawn before trimming the lamp? '.repeat(
      12,
    );
    expect((await post('user_002', '/api/knowledge/search', { query: long.slice(0, 1000) })).status).toBe(
      200,
    );
    const spent = await usage('user_002');
    expect(spent.total.inputTokens).toBeGreaterThanOrEqual(TOKENS_PER_DAY);

    const refused = await post('user_002', '/api/knowledge/search', { query: 'tide' });
    expect(refused.status).toBe(429);
    expect(await refused.json()).toMatchObject({ limit: 'tokens-per-day' });
    const memory = await post('user_002', '/api/memory/users/user_002/conversations/search', {
      query: 'tide',
    });
    expect(memory.status).toBe(429);
    const tool = await mcpSearch('user_002', 'tide');
    expect(tool.isError).toBe(true);
    expect(JSON.stringify(tool.content)).toMatch(/tokens today/);
    // Nothing more was spent.
    expect((await usage('user_002')).total).toEqual(spent.total);
  }, 60_000);
});

describe('ingestion', () => {
  it('records each of three upload-delete-upload cycles of the same file', async () => {
    const file = {
      fileName: 'lighthouse.md',
      contentBase64: Buffer.from(
        '# Lighthouse\n\n## Tides\n\nThe keeper reads the tide tables each dawn.\n',
      ).toString('base64'),
    };
    const before = (await usage('user_001')).backgroundByKind['ingestion']?.calls ?? 0;
    const ids = new Set<string>();
    for (let cycle = 0; cycle < 3; cycle += 1) {
      const uploaded = await post('user_001', '/api/knowledge/documents', file);
      expect(uploaded.status).toBe(202);
      const { document } = (await uploaded.json()) as { document: DocumentView };
      ids.add(document.documentId);
      await settle(runtime);
      const read = await as('user_001', `/api/knowledge/documents/${document.documentId}`);
      expect(((await read.json()) as { document: DocumentView }).document.status).toBe('ready');
      const removed = await as('user_001', `/api/knowledge/documents/${document.documentId}`, {
        method: 'DELETE',
      });
      expect(removed.status).toBe(204);
    }
    expect(ids.size).toBe(1);
    expect((await usage('user_001')).backgroundByKind['ingestion']?.calls).toBe(before + 3);
  }, 120_000);
});
