// MCP end to end over the local runtime with the SDK's own client, at the current protocol revision and the
// previous one: the tools reach the caller's memories and nobody else's.
import { randomUUID } from 'node:crypto';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalRuntime } from '../../local/runtime.js';
import { newFactId } from '../../shared/memory/consolidate-turn.js';
import type { ConversationSearchHit } from '../../shared/memory/contracts.js';
import type { UserProfile } from '../../shared/memory/memory-api.js';
import { factSource, onDay, profileFact, summaryDocument, storeFacts } from '../support/memory-fixtures.js';
import { startTestRuntime } from '../support/local-runtime.js';

let runtime: LocalRuntime;
beforeAll(async () => {
  runtime = await startTestRuntime();
});
afterAll(async () => {
  await runtime?.stop();
});

/** The SDK's client for a dev user: pinned to 2026-07-28, or the default 2025 initialize handshake. */
async function connect(userId: string, revision: 'current' | 'previous'): Promise<Client> {
  const client = new Client(
    { name: 'e2e', version: '1.0.0' },
    revision === 'current' ? { versionNegotiation: { mode: { pin: '2026-07-28' } } } : {},
  );
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${runtime.url}/api/mcp`), {
      requestInit: { headers: { 'x-ms-client-principal-id': userId } },
    }),
  );
  return client;
}

async function call<T>(client: Client, name: string, args: Record<string, unknown>): Promise<T> {
  const result = await client.callTool({ name, arguments: args });
  expect(result.isError, JSON.stringify(result.content)).toBeFalsy();
  // The text a model reads and the structured content say the same.
  const [text] = result.content;
  expect(text?.type === 'text' ? JSON.parse(text.text) : undefined).toEqual(result.structuredContent);
  return result.structuredContent as T;
}

const search = (client: Client, query: string) =>
  call<{ results: ConversationSearchHit[] }>(client, 'search_conversation_history', {
    search_query: query,
    limit: 5,
  }).then(({ results }) => results);

/** Three summarised conversations of user_001 with a fact from each, stored as the memory worker stores them. */
async function seedConversations(tag: string) {
  const texts = {
    lisbon: `Planned a trip to Lisbon in May (${tag}): trams, pastel de nata and the Alfama.`,
    rust: `Learnt Rust lifetimes and borrowing (${tag}) with small examples.`,
    risotto: `Cooked a mushroom risotto for friends (${tag}), stirring it slowly.`,
  };
  const sessions = { lisbon: randomUUID(), rust: randomUUID(), risotto: randomUUID() };
  const vectors = await runtime.app.chat.turn.llm.embed(Object.values(texts));
  const { summaries, facts } = runtime.app.memory;
  await Promise.all(
    (Object.keys(texts) as (keyof typeof texts)[]).map(async (key, i) => {
      const sessionId = sessions[key];
      await summaries.put(
        summaryDocument('user_001', sessionId, {
          summary: texts[key],
          vector_embedding: vectors[i]!,
          timestamp: onDay(3 + i),
        }),
        undefined,
      );
      await runtime.app.history.headers.touch({
        userId: 'user_001',
        sessionId,
        createdAt: onDay(3 + i),
        lastActivity: onDay(3 + i),
        messageCount: 2,
        preview: texts[key],
        firstUserText: `${key} ${tag}`,
      });
    }),
  );
  // Fact ids as the memory worker makes them.
  const factIds = { tea: newFactId(sessions.rust, tag, 0), lisbon: newFactId(sessions.lisbon, tag, 0) };
  await storeFacts(
    facts,
    profileFact('user_001', factIds.tea, [factSource(sessions.rust, 4)], {
      category: 'personal_preferences',
      statement: `Drinks green tea (${tag}).`,
    }),
  );
  await storeFacts(
    facts,
    profileFact('user_001', factIds.lisbon, [factSource(sessions.lisbon, 3)], {
      category: 'goals',
      statement: `Wants to visit Lisbon (${tag}).`,
    }),
  );
  return { sessions, factIds };
}

describe.each([
  ['current', '2026-07-28'],
  ['previous', '2025-11-25'],
] as const)('MCP at the %s protocol revision (%s)', (revision, version) => {
  let alice: Client;
  let bob: Client;
  let seeded: Awaited<ReturnType<typeof seedConversations>>;

  beforeAll(async () => {
    seeded = await seedConversations(revision);
    [alice, bob] = await Promise.all([connect('user_001', revision), connect('user_002', revision)]);
  });
  afterAll(async () => {
    await Promise.all([alice?.close(), bob?.close()]);
  });

  it(`negotiates ${version} and lists the three memory tools`, async () => {
    expect(alice.getNegotiatedProtocolVersion()).toBe(version);
    const { tools } = await alice.listTools();
    expect(tools.map((tool) => tool.name).sort()).toEqual([
      'delete_memory',
      'get_user_profile',
      'search_conversation_history',
    ]);
    const searchTool = tools.find((tool) => tool.name === 'search_conversation_history');
    expect(searchTool?.inputSchema.required).toEqual(['search_query']);
  });

  it("searches the caller's conversations and names them by title and date", async () => {
    const results = await search(alice, `trip to Lisbon in May ${revision}`);
    expect(results[0]).toMatchObject({
      sessionId: seeded.sessions.lisbon,
      title: `lisbon ${revision}`,
      date: onDay(3),
      themes: ['travel'],
      user_sentiment: 'positive',
    });
    expect(results[0]!.score).toBeGreaterThan(0);
  });

  it("reads the caller's profile by attribute, and with its history", async () => {
    const profile = await call<UserProfile>(alice, 'get_user_profile', {});
    expect(profile.profile.personal_preferences).toContainEqual(
      expect.objectContaining({ factId: seeded.factIds.tea, statement: `Drinks green tea (${revision}).` }),
    );
    expect(profile.facts).toBeUndefined();
    const withHistory = await call<UserProfile>(alice, 'get_user_profile', { include_history: true });
    expect(withHistory.facts).toContainEqual(
      expect.objectContaining({
        factId: seeded.factIds.lisbon,
        provenance: [factSource(seeded.sessions.lisbon, 3)],
        status: 'active',
      }),
    );
  });

  it("lets another user see none of the caller's memories and delete none of them", async () => {
    const theirs = await search(bob, `trip to Lisbon in May ${revision}`);
    expect(theirs.map((hit) => hit.sessionId)).not.toContain(seeded.sessions.lisbon);
    const profile = await call<UserProfile>(bob, 'get_user_profile', { include_history: true });
    expect(JSON.stringify(profile)).not.toContain(revision);

    const refused = await bob.callTool({
      name: 'delete_memory',
      arguments: { factId: seeded.factIds.tea },
    });
    expect(refused.isError).toBe(true);
    expect(refused.content).toEqual([
      { type: 'text', text: `No fact '${seeded.factIds.tea}' in this user's memories.` },
    ]);
    // Forgetting "their" conversation of that id reaches only their own (empty) memory.
    await call(bob, 'delete_memory', { sessionId: seeded.sessions.lisbon });
    expect(await runtime.app.memory.facts.get('user_001', seeded.factIds.tea)).toBeDefined();
    expect(await runtime.app.memory.summaries.get('user_001', seeded.sessions.lisbon)).toBeDefined();
  });

  it('forgets a conversation and a fact, gone from search and the profile at once', async () => {
    const forgotten = await call<{ forgot: string; summary: boolean; factsDeleted: number }>(
      alice,
      'delete_memory',
      { sessionId: seeded.sessions.lisbon },
    );
    expect(forgotten).toMatchObject({ forgot: 'conversation', summary: true, factsDeleted: 1 });
    const after = await search(alice, `trip to Lisbon in May ${revision}`);
    expect(after.map((hit) => hit.sessionId)).not.toContain(seeded.sessions.lisbon);
    expect(after.map((hit) => hit.sessionId)).toContain(seeded.sessions.rust);

    await call(alice, 'delete_memory', { factId: seeded.factIds.tea });
    const profile = await call<UserProfile>(alice, 'get_user_profile', { include_history: true });
    const ids = (profile.facts ?? []).map((fact) => fact.factId);
    expect(ids).not.toContain(seeded.factIds.tea);
    expect(ids).not.toContain(seeded.factIds.lisbon);

    const again = await alice.callTool({
      name: 'delete_memory',
      arguments: { factId: seeded.factIds.tea },
    });
    expect(again.isError).toBe(true);
  });

  it('refuses arguments that name both a fact and a conversation, or neither', async () => {
    for (const args of [{}, { factId: seeded.factIds.tea, sessionId: seeded.sessions.rust }]) {
      const result = await alice.callTool({ name: 'delete_memory', arguments: args });
      expect(result.isError).toBe(true);
      expect(JSON.stringify(result.content)).toMatch(/exactly one of factId and sessionId/);
    }
    expect(await runtime.app.memory.summaries.get('user_001', seeded.sessions.rust)).toBeDefined();
  });
});

describe('older 2025-era clients', () => {
  it.each(['2025-06-18', '2025-03-26'])('initialize at %s and see the same tools', async (version) => {
    const client = new Client({ name: 'e2e', version: '1.0.0' }, { supportedProtocolVersions: [version] });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${runtime.url}/api/mcp`), {
        requestInit: { headers: { 'x-ms-client-principal-id': 'user_003' } },
      }),
    );
    expect(client.getNegotiatedProtocolVersion()).toBe(version);
    expect((await client.listTools()).tools).toHaveLength(3);
    await client.close();
  });
});

describe('the endpoint without sessions', () => {
  it('answers GET and DELETE 405, and a request without an identity 401', async () => {
    for (const method of ['GET', 'DELETE']) {
      const response = await fetch(`${runtime.url}/api/mcp`, {
        method,
        headers: { 'x-ms-client-principal-id': 'user_001', accept: 'text/event-stream' },
      });
      expect(response.status).toBe(405);
      expect(response.headers.get('allow')).toBe('POST');
    }
    const anonymous = await fetch(`${runtime.url}/api/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers.get('content-type')).toBe('application/problem+json');
  });
});
