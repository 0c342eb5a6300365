// Personal API keys end to end on the local runtime: a key made in the API drives MCP as its owner and nobody
// else; a revoked key is refused by a second app on the same stores within the stated time, an expired one at once;
// 10,000 guesses cost bounded Cosmos DB reads while a real key keeps working; no log, span or answer shows a key.
import { randomUUID } from 'node:crypto';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { LocalRuntime } from '../../local/runtime.js';
import { mintApiKey } from '../../shared/api-keys/key-format.js';
import { DEFAULT_LOOKUPS } from '../../shared/api-keys/key-verifier.js';
import { UnauthenticatedError } from '../../shared/errors.js';
import { newFactId } from '../../shared/memory/consolidate-turn.js';
import { factSource, onDay, profileFact, storeFacts, summaryDocument } from '../support/memory-fixtures.js';
import { settle, startTestRuntime } from '../support/local-runtime.js';
import { listToolsWithKey } from '../support/mcp-with-key.js';
import { startOtlpReceiver, type OtlpReceiver } from '../support/otlp-receiver.js';
import { secondInstance } from '../../local/second-instance.js';

const CACHE_SECONDS = 1;

let runtime: LocalRuntime;
let receiver: OtlpReceiver;
let stopped = false;
const logged: string[] = [];
/** Every answer a client read after its key was created, to search for the key. */
const answers: string[] = [];

beforeAll(async () => {
  receiver = await startOtlpReceiver();
  runtime = await startTestRuntime({
    settings: {
      API_KEYS_CACHE_SECONDS: String(CACHE_SECONDS),
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
    },
    capture: (_level, ...args) =>
      logged.push(args.map((arg) => (typeof arg === 'string' ? arg : JSON.stringify(arg))).join(' ')),
  });
}, 120_000);
afterAll(async () => {
  if (!stopped) await runtime?.stop();
  await receiver?.close();
});

interface CreatedKey {
  id: string;
  key: string;
  prefix: string;
}

async function api(
  path: string,
  init: { method?: string; userId?: string; json?: unknown; key?: string } = {},
) {
  const response = await fetch(`${runtime.url}${path}`, {
    method: init.method ?? 'GET',
    headers: {
      ...(init.userId === undefined ? {} : { 'x-ms-client-principal-id': init.userId }),
      ...(init.key === undefined ? {} : { authorization: `Bearer ${init.key}` }),
      ...(init.json === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(init.json === undefined ? {} : { body: JSON.stringify(init.json) }),
  });
  return { status: response.status, text: await response.text() };
}

async function createKey(
  userId: string,
  body: Record<string, unknown> = { name: 'e2e' },
): Promise<CreatedKey> {
  const reply = await api('/api/api-keys', { method: 'POST', userId, json: body });
  expect(reply.status, reply.text).toBe(201);
  return JSON.parse(reply.text) as CreatedKey;
}

/** The SDK's MCP client, identified by a key alone. */
async function connectWithKey(key: string): Promise<Client> {
  const client = new Client(
    { name: 'e2e-key', version: '1.0.0' },
    { versionNegotiation: { mode: { pin: '2026-07-28' } } },
  );
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${runtime.url}/api/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${key}` } },
    }),
  );
  return client;
}

async function toolText(client: Client, name: string, args: Record<string, unknown>): Promise<string> {
  const result = await client.callTool({ name, arguments: args });
  const text = JSON.stringify(result);
  answers.push(text);
  return text;
}

/** One JSON-RPC tools/list over plain HTTP, as a bare MCP client sends it. */
function listTools(key: string) {
  return listToolsWithKey(runtime.url, key, 'burst');
}

const keyHeaders = (key: string) => new Headers({ authorization: `Bearer ${key}` });
const created: string[] = [];

describe('personal API keys on the local runtime', () => {
  it("drives MCP as the key's owner: A's key finds A's memory and conversations, none of B's", async () => {
    const tag = randomUUID().slice(0, 8);
    const [aliceSession, bobSession] = [randomUUID(), randomUUID()];
    const texts = {
      alice: `Alice planned a kayak trip on the fjord (${tag}).`,
      bob: `Bob planned a kayak trip on the lagoon (${tag}).`,
    };
    const vectors = await runtime.app.chat.turn.llm.embed([texts.alice, texts.bob]);
    for (const [userId, sessionId, summary, vector] of [
      ['user_001', aliceSession, texts.alice, vectors[0]],
      ['user_002', bobSession, texts.bob, vectors[1]],
    ] as const) {
      await runtime.app.memory.summaries.put(
        summaryDocument(userId, sessionId, { summary, vector_embedding: vector ?? [], timestamp: onDay(3) }),
        undefined,
      );
      await storeFacts(
        runtime.app.memory.facts,
        profileFact(userId, newFactId(sessionId, tag, 0), [factSource(sessionId, 3)], {
          category: 'goals',
          statement: `${userId === 'user_001' ? 'Alice' : 'Bob'} wants to paddle (${tag}).`,
        }),
      );
    }

    const alice = await createKey('user_001', { name: 'Claude Desktop' });
    created.push(alice.key);
    const client = await connectWithKey(alice.key);
    try {
      const profile = await toolText(client, 'get_user_profile', {});
      expect(profile).toContain(`Alice wants to paddle (${tag})`);
      expect(profile).not.toContain(`Bob wants to paddle (${tag})`);
      const found = await toolText(client, 'search_conversation_history', {
        search_query: `kayak trip ${tag}`,
        limit: 10,
      });
      expect(found).toContain(aliceSession);
      expect(found).not.toContain(bobSession);
      expect(found).not.toContain('lagoon');
    } finally {
      await client.close();
    }
  }, 60_000);

  it('lists the keys without the key, and a key opens none of the other routes', async () => {
    const key = created[0] ?? '';
    // The last use is written beside the request that made it, not before its answer.
    await vi.waitFor(
      async () => {
        const list = await api('/api/api-keys', { userId: 'user_001' });
        answers.push(list.text);
        expect(list.status).toBe(200);
        const { keys } = JSON.parse(list.text) as {
          keys: { name: string; prefix: string; lastUsedAt: string | null }[];
        };
        expect(keys.map((entry) => entry.name)).toContain('Claude Desktop');
        expect(keys.find((entry) => key.startsWith(entry.prefix))?.lastUsedAt).not.toBeNull();
      },
      { timeout: 10_000 },
    );
    for (const path of [
      '/api/api-keys',
      '/api/history/users/user_001/conversations',
      '/api/memory/users/user_001/memories',
    ]) {
      const refused = await api(path, { key });
      answers.push(refused.text);
      expect(refused.status, path).toBe(401);
    }
  });

  it('refuses a revoked key on a second app of the same stores within API_KEYS_CACHE_SECONDS', async () => {
    const { key, id } = await createKey('user_001', { name: 'to revoke' });
    created.push(key);
    const other = secondInstance(runtime);
    try {
      // The second app checks the key and keeps it for the cache time.
      await expect(other.identity.resolve(keyHeaders(key), { apiKeys: true })).resolves.toMatchObject({
        userId: 'user_001',
        identityProvider: 'api-key',
      });
      const revoked = await api(`/api/api-keys/${id}`, { method: 'DELETE', userId: 'user_001' });
      expect(revoked.status).toBe(204);
      // The instance that revoked it refuses it at once; the other within the stated time.
      expect((await listTools(key)).status).toBe(401);
      await new Promise((resolve) => setTimeout(resolve, CACHE_SECONDS * 1000));
      await expect(other.identity.resolve(keyHeaders(key), { apiKeys: true })).rejects.toBeInstanceOf(
        UnauthenticatedError,
      );
    } finally {
      await other.close();
    }
  }, 30_000);

  it('refuses an expired key', async () => {
    const expiresAt = new Date(Date.now() + 1_500).toISOString();
    const { key } = await createKey('user_002', { name: 'short-lived', expiresAt });
    created.push(key);
    expect((await listTools(key)).status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, Date.parse(expiresAt) - Date.now() + 50));
    const refused = await listTools(key);
    const text = await refused.text();
    answers.push(text);
    expect(refused.status).toBe(401);
    expect(text).toContain('expired');
  }, 30_000);

  it('answers 10,000 guessed keys with bounded Cosmos DB reads, while a real key keeps working', async () => {
    const { key } = await createKey('user_003', { name: 'busy' });
    created.push(key);
    expect((await listTools(key)).status).toBe(200);
    await settle(runtime);
    const before = runtime.stats().cosmos.requests;
    const started = Date.now();
    const statuses = new Map<number, number>();
    const realKeyStatuses: number[] = [];
    const guesses = Array.from({ length: 10_000 }, () => mintApiKey().key);
    let next = 0;
    const worker = async () => {
      for (let index = next++; index < guesses.length; index = next++) {
        const response = await listTools(guesses[index] ?? '');
        const text = await response.text();
        if (index % 500 === 0) answers.push(text);
        statuses.set(response.status, (statuses.get(response.status) ?? 0) + 1);
        if (index % 1_000 === 0) realKeyStatuses.push((await listTools(key)).status);
      }
    };
    await Promise.all(Array.from({ length: 32 }, worker));
    const elapsedSeconds = Math.ceil((Date.now() - started) / 1000);
    const reads = runtime.stats().cosmos.requests - before;

    expect([...statuses.keys()].sort()).toEqual([401, 429]);
    expect((statuses.get(401) ?? 0) + (statuses.get(429) ?? 0)).toBe(10_000);
    // Each guess that was looked up is one read; the budget allows its burst, then its rate; the real key is read
    // again once per cache time. Nothing else runs on this runtime meanwhile.
    const bound =
      DEFAULT_LOOKUPS.burst + DEFAULT_LOOKUPS.perSecond * elapsedSeconds + elapsedSeconds / CACHE_SECONDS + 5;
    expect(reads).toBeLessThanOrEqual(bound);
    expect(statuses.get(401) ?? 0).toBeLessThanOrEqual(bound);
    // The real key answered throughout the burst (a tools/list every 1,000 guesses), and after it.
    expect(realKeyStatuses).toEqual(Array.from({ length: 10 }, () => 200));
    expect((await listTools(key)).status).toBe(200);
  }, 300_000);

  it('never shows a key in a later answer, a log line or an exported span', async () => {
    expect(created.length).toBeGreaterThanOrEqual(4);
    await settle(runtime);
    await runtime.stop();
    stopped = true;
    const spans = receiver.payloads().join('\n');
    expect(spans.length).toBeGreaterThan(0);
    expect(logged.length).toBeGreaterThan(0);
    for (const key of created) {
      const secret = key.slice(16);
      for (const answer of answers) expect(answer).not.toContain(secret);
      for (const line of logged) expect(line).not.toContain(secret);
      expect(spans).not.toContain(secret);
    }
  }, 60_000);
});
