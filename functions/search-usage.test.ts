// Every search and ingestion is counted to the user who caused it, in process: knowledge and memory search over
// REST and MCP's search_conversation_history each record their query's embedding (GET /api/usage shows it), are
// refused once the day's tokens are spent or the minute's searches made, and each ingestion counts once.
import azureFunctions from '@azure/functions';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { describe, expect, it } from 'vitest';
import { provideApp } from '../shared/app/app.js';
import type { EndpointDefinition } from '../shared/http/endpoint.js';
import { KNOWLEDGE_INGEST_QUEUE, SHARED_LIBRARY, type DocumentView } from '../shared/knowledge/contracts.js';
import type { UsageReport } from '../shared/usage/contracts.js';
import { asUser, callEndpoint, type CallOptions, type Reply } from '../test/support/call-endpoint.js';
import { inProcessFetch } from '../test/support/in-process-fetch.js';
import { KeywordEmbeddings } from '../test/support/in-memory-knowledge.js';
import { createTestApp, type TestApp } from '../test/support/in-memory-ports.js';
import {
  deleteDocumentEndpoint,
  knowledgeWorker,
  searchKnowledgeEndpoint,
  uploadDocumentEndpoint,
} from './knowledge.js';
import { mcpHandler } from './mcp.js';
import { searchConversationsEndpoint } from './memory-api.js';
import { getUsageEndpoint } from './usage.js';

const { InvocationContext } = azureFunctions;
const MCP_URL = 'http://localhost:7071/api/mcp';
const HANDBOOK =
  '# Handbook\n\n## Parental leave\n\nParental leave lasts sixteen weeks and is paid in full.\n';
const QUERY = 'how long is parental leave';

function accountedApp(settings: Record<string, string> = {}): { app: TestApp; model: KeywordEmbeddings } {
  const model = new KeywordEmbeddings(['parental', 'leave']);
  const app = createTestApp({
    llm: model,
    accounted: true,
    settings: { KNOWLEDGE_SHARED_LIBRARY: 'user_003', ...settings },
  });
  provideApp(() => Promise.resolve(app));
  return { app, model };
}

function call<P, Q, B>(
  app: TestApp,
  definition: EndpointDefinition<TestApp, P, Q, B>,
  user: string,
  options: CallOptions = {},
): Promise<Reply> {
  return callEndpoint(definition, app, { ...options, headers: asUser(user, options.headers) });
}

async function usageOf(app: TestApp, user: string): Promise<UsageReport> {
  const reply = await call(app, getUsageEndpoint, user, { params: { userId: user } });
  expect(reply.status).toBe(200);
  return reply.json<UsageReport>();
}

const embeddingCalls = async (app: TestApp, user: string) =>
  (await usageOf(app, user)).backgroundByKind['embedding']?.calls ?? 0;

async function mcpClient(app: TestApp, user: string): Promise<Client> {
  const client = new Client({ name: 'test', version: '1' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(MCP_URL), {
      fetch: inProcessFetch(mcpHandler(() => Promise.resolve(app))),
      requestInit: { headers: asUser(user) },
    }),
  );
  return client;
}

const searchKnowledge = (app: TestApp, user: string) =>
  call(app, searchKnowledgeEndpoint, user, { json: { query: QUERY, limit: 3 } });
const searchMemory = (app: TestApp, user: string) =>
  call(app, searchConversationsEndpoint, user, {
    params: { userId: user },
    json: { query: QUERY, limit: 3 },
  });

describe('a search outside a turn', () => {
  it('records its embedding under the caller, over REST (knowledge and memory) and MCP', async () => {
    const { app, model } = accountedApp();
    expect(await embeddingCalls(app, 'user_001')).toBe(0);

    expect((await searchKnowledge(app, 'user_001')).status).toBe(200);
    expect(await embeddingCalls(app, 'user_001')).toBe(1);
    expect((await searchMemory(app, 'user_001')).status).toBe(200);
    expect(await embeddingCalls(app, 'user_001')).toBe(2);

    const client = await mcpClient(app, 'user_001');
    const result = await client.callTool({
      name: 'search_conversation_history',
      arguments: { search_query: QUERY, limit: 3 },
    });
    await client.close();
    expect(result.isError).toBeFalsy();
    const usage = await usageOf(app, 'user_001');
    expect(usage.backgroundByKind['embedding']).toMatchObject({ calls: 3, inputTokens: 3 * 5 });
    expect(model.requests).toHaveLength(3);
    // Nobody else paid for them.
    expect(await embeddingCalls(app, 'user_002')).toBe(0);
  });

  it("is refused once the day's tokens are spent: 429 over REST, a readable tool error over MCP", async () => {
    const { app, model } = accountedApp({ QUOTA_TOKENS_PER_DAY: '5' });
    expect((await searchKnowledge(app, 'user_001')).status).toBe(200);

    const refused = await searchKnowledge(app, 'user_001');
    expect(refused.status).toBe(429);
    expect(await refused.json()).toMatchObject({ code: 'quota_exceeded', limit: 'tokens-per-day' });
    expect((await searchMemory(app, 'user_001')).status).toBe(429);
    const client = await mcpClient(app, 'user_001');
    const result = await client.callTool({
      name: 'search_conversation_history',
      arguments: { search_query: QUERY, limit: 3 },
    });
    await client.close();
    expect(result.isError).toBe(true);
    expect(JSON.stringify(result.content)).toMatch(/tokens today/);
    // The refused searches embedded nothing; another user still searches.
    expect(model.requests).toHaveLength(1);
    expect((await searchKnowledge(app, 'user_002')).status).toBe(200);
  });

  it('is refused past QUOTA_SEARCHES_PER_MINUTE with 429 naming the limit', async () => {
    const { app, model } = accountedApp({ QUOTA_SEARCHES_PER_MINUTE: '2' });
    const minute = new Date('2026-11-05T10:00:10Z');
    app.quota = { ...app.quota, now: () => minute };
    expect((await searchKnowledge(app, 'user_001')).status).toBe(200);
    expect((await searchMemory(app, 'user_001')).status).toBe(200);
    const refused = await searchKnowledge(app, 'user_001');
    expect(refused.status).toBe(429);
    expect(refused.headers.get('retry-after')).toBe('50');
    expect(await refused.json()).toMatchObject({ limit: 'searches-per-minute', allowed: 2, current: 2 });
    expect(model.requests).toHaveLength(2);
    // The next minute counts anew.
    app.quota = { ...app.quota, now: () => new Date(minute.getTime() + 60_000) };
    expect((await searchKnowledge(app, 'user_001')).status).toBe(200);
  });
});

describe('ingestion', () => {
  async function runWorker(app: TestApp): Promise<void> {
    const queued = app.fakes.publisher.published.filter((p) => p.entity === KNOWLEDGE_INGEST_QUEUE);
    app.fakes.publisher.published.length = 0;
    for (const { message } of queued)
      await knowledgeWorker(
        message.body,
        new InvocationContext({
          invocationId: message.messageId,
          functionName: 'knowledgeWorker',
          triggerMetadata: { messageId: message.messageId, deliveryCount: 1 },
        }),
      );
  }

  async function uploadAndIndex(app: TestApp, user: string): Promise<DocumentView> {
    const reply = await call(app, uploadDocumentEndpoint, user, {
      json: { fileName: 'handbook.md', contentBase64: Buffer.from(HANDBOOK).toString('base64') },
    });
    expect(reply.status).toBe(202);
    await runWorker(app);
    return (await reply.json<{ document: DocumentView }>()).document;
  }

  it('counts each of three upload-delete-upload cycles of the same file once', async () => {
    const { app, model } = accountedApp();
    const ids = new Set<string>();
    for (let cycle = 0; cycle < 3; cycle += 1) {
      const document = await uploadAndIndex(app, 'user_001');
      ids.add(document.documentId);
      const removed = await call(app, deleteDocumentEndpoint, 'user_001', {
        params: { documentId: document.documentId },
      });
      expect(removed.status).toBe(204);
    }
    // The same document id each time, and each ingestion embedded its one batch.
    expect(ids.size).toBe(1);
    expect(model.requests).toHaveLength(3);
    const usage = await usageOf(app, 'user_001');
    expect(usage.backgroundByKind['ingestion']?.calls).toBe(3);
  });

  it('counts a shared-library document to its uploader, with the library noted', async () => {
    const { app } = accountedApp();
    const document = await uploadAndIndex(app, 'user_003');
    expect(document.library).toBe('shared');
    expect((await usageOf(app, 'user_003')).backgroundByKind['ingestion']?.calls).toBe(1);
    const records = [...app.fakes.usage.calls.values()].filter((record) => record.userId === 'user_003');
    expect(records.map((record) => record.library)).toEqual([SHARED_LIBRARY]);
  });
});
