// GET /api/health against the running local runtime tells the truth: a deleted Cosmos DB container, or an LLM
// server without the route LLM_API names, makes it 503 naming the dependency, though the rest still answers.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import type { LocalRuntime } from '../../local/runtime.js';
import { SESSIONS_CONTAINER } from '../../shared/chat/contracts/documents.js';
import { startTestRuntime } from '../support/local-runtime.js';

interface HealthBody {
  status: string;
  failing: string[];
  dependencies: Record<string, { status: string; detail: string }>;
}

async function health(runtime: LocalRuntime): Promise<{ status: number; body: HealthBody }> {
  const response = await fetch(`${runtime.url}/api/health`);
  return { status: response.status, body: (await response.json()) as HealthBody };
}

/** An OpenAI-compatible server that lists its models but serves no other route (as an old Ollama for /responses). */
async function startModelsOnlyServer(): Promise<{ baseUrl: string; requests: string[]; server: Server }> {
  const requests: string[] = [];
  const server = createServer((req, res) => {
    requests.push(`${req.method ?? ''} ${req.url ?? ''}`);
    req.resume();
    if (req.method === 'GET' && req.url === '/v1/models') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ object: 'list', data: [{ id: 'chat-model', object: 'model' }] }));
      return;
    }
    res.writeHead(404, { 'content-type': 'text/plain' });
    res.end('404 page not found');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { baseUrl: `http://127.0.0.1:${port}/v1`, requests, server };
}

describe('GET /api/health', () => {
  let runtime: LocalRuntime | undefined;
  let server: Server | undefined;
  afterEach(async () => {
    await runtime?.stop();
    runtime = undefined;
    await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
    server = undefined;
  });

  it('is 503 naming the container when one the app uses is gone', async () => {
    runtime = await startTestRuntime({ settings: { HEALTH_CACHE_SECONDS: '0' } });
    const before = await health(runtime);
    expect(before.status).toBe(200);
    expect(before.body.failing).toEqual([]);
    expect(before.body.dependencies.cosmos?.detail).toMatch(/containers reachable/);

    await runtime.clients.database.container(SESSIONS_CONTAINER).delete();
    const after = await health(runtime);
    expect(after.status).toBe(503);
    expect(after.body.status).toBe('degraded');
    expect(after.body.failing).toEqual(['cosmos']);
    expect(after.body.dependencies.cosmos).toMatchObject({ status: 'down' });
    expect(after.body.dependencies.cosmos?.detail).toMatch(/container "sessions" \(not found\)/);
    expect(after.body.dependencies.webPubSub?.status).toBe('up');
  });

  it('keeps the last answer for HEALTH_CACHE_SECONDS instead of reading every container on each poll', async () => {
    runtime = await startTestRuntime({ settings: { HEALTH_CACHE_SECONDS: '600' } });
    expect((await health(runtime)).status).toBe(200);
    await runtime.clients.database.container(SESSIONS_CONTAINER).delete();
    // Within the cache time the poll costs no request to Cosmos DB, so it still shows the last answer.
    expect((await health(runtime)).status).toBe(200);
  });

  it('is 503 naming the LLM route when the server has no /responses and LLM_API=responses', async () => {
    const models = await startModelsOnlyServer();
    server = models.server;
    runtime = await startTestRuntime({
      settings: {
        LLM_PROVIDER: 'openai-compatible',
        LLM_BASE_URL: models.baseUrl,
        LLM_CHAT_MODEL: 'chat-model',
        LLM_EMBEDDING_MODEL: 'embedding-model',
        LLM_API: 'responses',
      },
    });
    const reply = await health(runtime);
    expect(reply.status).toBe(503);
    expect(reply.body.failing).toEqual(['llm']);
    expect(reply.body.dependencies.llm?.detail).toMatch(/no \/responses route \(POST answered 404\)/);
    expect(reply.body.dependencies.llm?.detail).toMatch(/LLM_API=chat-completions/);
    expect(models.requests).toContain('POST /v1/responses');
  });

  it('is up with the offline model on either API, naming the API in use', async () => {
    runtime = await startTestRuntime({ settings: { LLM_API: 'responses' } });
    const reply = await health(runtime);
    expect(reply.status).toBe(200);
    expect(reply.body.dependencies.llm?.detail).toBe('offline stand-in model reachable (responses)');
  });
});
