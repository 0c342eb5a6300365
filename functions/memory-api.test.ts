// The Memory API in process: real HttpRequest objects, the real use-cases, the in-memory memory and history
// fakes, and a model whose embeddings are keyword counts.
import { beforeEach, describe, expect, it } from 'vitest';
import type { App } from '../shared/app/app.js';
import type { EndpointDefinition } from '../shared/http/endpoint.js';
import type { LlmGateway } from '../shared/llm/llm-gateway.js';
import type { ConversationSearchHit, ProfileFact } from '../shared/memory/contracts.js';
import type { MemoriesPage } from '../shared/memory/memory-api.js';
import { asUser, callEndpoint, type CallOptions, type Reply } from '../test/support/call-endpoint.js';
import { createTestApp, type TestApp } from '../test/support/in-memory-ports.js';
import { ID_FORMATS } from '../shared/ids.js';
import { summaryView } from '../test/support/in-memory-memory.js';
import {
  consolidationRecord,
  factSource,
  onDay,
  profileFact,
  summaryDocument,
  storeFacts,
} from '../test/support/memory-fixtures.js';
import { deleteMemoriesEndpoint, getMemoriesEndpoint, searchConversationsEndpoint } from './memory-api.js';

const LISBON = '11111111-1111-4111-8111-111111111111';
const RUST = '22222222-2222-4222-8222-222222222222';
const COOKING = '33333333-3333-4333-8333-333333333333';
// Fact ids as the memory worker makes them: fact- and 16 hex digits.
const TEA = 'fact-7ea0000000000001';
const COFFEE = 'fact-c0ffee0000000002';
const LISBON_TRIP = 'fact-115b0a0000000003';
const BOBS = 'fact-b0b0000000000004';

/** Embeddings that count the words lisbon, rust and cooking: search ranks by them, deterministically. */
const KEYWORDS = ['lisbon', 'rust', 'cooking'];
const embedding = (text: string) =>
  KEYWORDS.map(
    (word) =>
      text
        .toLowerCase()
        .split(/\W+/)
        .filter((w) => w === word).length,
  );
const keywordModel: LlmGateway = {
  embed: (texts) => Promise.resolve(texts.map(embedding)),
  streamChat: () => Promise.reject(new Error('not used')),
  completeJson: () => Promise.reject(new Error('not used')),
  probe: () => Promise.resolve({ ok: true, detail: 'keywords' }),
};

let app: TestApp;
beforeEach(async () => {
  app = createTestApp({ llm: keywordModel });
  const conversations: [string, string, number][] = [
    [LISBON, 'Planning a trip to Lisbon in May.', 3],
    [RUST, 'Learning Rust lifetimes and borrowing.', 4],
    [COOKING, 'Cooking a risotto for friends.', 5],
  ];
  for (const [sessionId, text, day] of conversations) {
    await app.fakes.summaries.put(
      summaryDocument('user_001', sessionId, {
        summary: text,
        vector_embedding: embedding(text),
        timestamp: onDay(day),
      }),
      undefined,
    );
    await app.fakes.headers.touch({
      userId: 'user_001',
      sessionId,
      createdAt: onDay(day),
      lastActivity: onDay(day),
      messageCount: 2,
      preview: text,
      firstUserText: text,
    });
  }
  await app.fakes.summaries.put(
    summaryDocument('user_002', 'ffffffff-ffff-4fff-8fff-ffffffffffff', {
      summary: 'Bob went to Lisbon too.',
      vector_embedding: embedding('lisbon'),
    }),
    undefined,
  );
  await storeFacts(
    app.fakes.facts,
    profileFact('user_001', TEA, [factSource(LISBON, 3)], {
      category: 'personal_preferences',
      statement: 'Drinks tea.',
      status: 'superseded',
      validUntil: onDay(4),
      supersededBy: COFFEE,
      changeReason: 'Said they switched to coffee.',
    }),
  );
  await storeFacts(
    app.fakes.facts,
    profileFact('user_001', COFFEE, [factSource(RUST, 4)], {
      category: 'personal_preferences',
      statement: 'Drinks coffee.',
    }),
  );
  await storeFacts(
    app.fakes.facts,
    profileFact('user_001', LISBON_TRIP, [factSource(LISBON, 3), factSource(COOKING, 5)], {
      category: 'goals',
      statement: 'Plans a trip to Lisbon.',
    }),
  );
  await storeFacts(app.fakes.facts, profileFact('user_002', BOBS, [factSource(LISBON, 3)]));
  await app.fakes.facts.createConsolidation(consolidationRecord('user_001', LISBON, 'turn-3'));
});

function call<P, Q, B>(
  definition: EndpointDefinition<App, P, Q, B>,
  path: string,
  user: string,
  pathUser: string,
  options: CallOptions = {},
) {
  return callEndpoint(definition, app, {
    path,
    params: { userId: pathUser },
    headers: asUser(user),
    ...options,
  });
}

const memories = (query = '', user = 'user_001', pathUser = user) =>
  call(getMemoriesEndpoint, `/api/memory/users/${pathUser}/memories${query}`, user, pathUser);
const forget = (query = '', user = 'user_001', pathUser = user) =>
  call(deleteMemoriesEndpoint, `/api/memory/users/${pathUser}/memories${query}`, user, pathUser, {
    method: 'DELETE',
  });
const search = (json: unknown, user = 'user_001', pathUser = user) =>
  call(searchConversationsEndpoint, `/api/memory/users/${pathUser}/conversations/search`, user, pathUser, {
    method: 'POST',
    json,
  });

async function expectProblem(reply: Reply, status: number, code: string) {
  const problem = await reply.json<{ status: number; code: string; detail: string }>();
  expect(reply.status, JSON.stringify(problem)).toBe(status);
  expect(reply.headers.get('content-type')).toBe('application/problem+json');
  expect(problem).toMatchObject({ status, code });
  return problem;
}

/** The fact as the API shows it. */
function view(fact: ProfileFact) {
  const { id, kind: _kind, userId: _userId, ...rest } = fact;
  // A fact without a scope is the user's shared memory, and the API says so.
  return { factId: id, ...rest, scope: rest.scope ?? 'user' };
}

/** Everything user_001's memory holds, read straight from the fakes. */
async function snapshot() {
  return {
    facts: await app.fakes.facts.list('user_001'),
    summaries: [...app.fakes.summaries.documents.keys()].sort(),
    records: [...app.fakes.facts.records.keys()].sort(),
  };
}

describe('GET /api/memory/users/{userId}/memories', () => {
  it('shows every fact with provenance and validity, and the summaries without vectors, newest first', async () => {
    const reply = await memories();
    expect(reply.status).toBe(200);
    expect(reply.headers.get('cache-control')).toBe('no-store');
    const page = await reply.json<MemoriesPage>();
    const facts = await app.fakes.facts.list('user_001');
    expect(page).toEqual({
      facts: facts.map(view),
      summaries: [COOKING, RUST, LISBON].map((id) => ({
        ...summaryView(app.fakes.summaries.documents.get(`user_001\u0000${id}`)!.document),
        scope: 'user',
      })),
    });
    expect(page.facts.map((f) => [f.factId, f.status])).toEqual([
      [TEA, 'superseded'],
      [LISBON_TRIP, 'active'],
      [COFFEE, 'active'],
    ]);
    expect(page.facts[0]).toMatchObject({
      validFrom: onDay(3),
      validUntil: onDay(4),
      supersededBy: COFFEE,
      changeReason: 'Said they switched to coffee.',
      provenance: [factSource(LISBON, 3)],
    });
    expect(JSON.stringify(page)).not.toMatch(/vector_embedding|"kind"|user_002/);
  });

  it('pages the summaries with limit and continuationToken, and keeps to the active facts with status=active', async () => {
    const first = await (await memories('?limit=2&status=active')).json<MemoriesPage>();
    expect(first.facts.map((f) => f.factId)).toEqual([LISBON_TRIP, COFFEE]);
    expect(first.summaries.map((s) => s.sessionId)).toEqual([COOKING, RUST]);
    expect(first.continuationToken).toEqual(expect.any(String));
    const token = encodeURIComponent(first.continuationToken!);
    const second = await (await memories(`?limit=2&continuationToken=${token}`)).json<MemoriesPage>();
    expect(second.summaries.map((s) => s.sessionId)).toEqual([LISBON]);
    expect(second.continuationToken).toBeUndefined();
  });

  it("refuses another user's memories (403) and bad limits and statuses (400)", async () => {
    await expectProblem(await memories('', 'user_002', 'user_001'), 403, 'forbidden');
    expect((await expectProblem(await memories('?limit=0'), 400, 'validation_failed')).detail).toBe(
      'Invalid query: limit must be a whole number from 1 to 200.',
    );
    expect((await expectProblem(await memories('?status=old'), 400, 'validation_failed')).detail).toBe(
      "Invalid query: status must be 'active' or 'all'.",
    );
  });
});

describe('DELETE /api/memory/users/{userId}/memories', () => {
  it('forgets one fact (204), and answers an unknown or already forgotten one 404', async () => {
    const reply = await forget(`?factId=${COFFEE}`);
    expect(reply.status).toBe(204);
    expect(await reply.text()).toBe('');
    expect((await app.fakes.facts.list('user_001')).map((f) => f.id)).toEqual([TEA, LISBON_TRIP]);
    const again = await expectProblem(await forget(`?factId=${COFFEE}`), 404, 'not_found');
    expect(again.detail).toBe(`No fact '${COFFEE}' in this user's memories.`);
    // Another user's fact id is just as unknown, and stays theirs.
    await expectProblem(await forget(`?factId=${BOBS}`), 404, 'not_found');
    expect(await app.fakes.facts.get('user_002', BOBS)).toBeDefined();
  });

  it('forgets one conversation: its summary, its records and the facts only it taught; the rest lose its sources', async () => {
    expect((await forget(`?sessionId=${LISBON.toUpperCase()}`)).status).toBe(204);
    const after = await snapshot();
    expect(after.summaries).toEqual([
      `user_001\u0000${RUST}`,
      `user_001\u0000${COOKING}`,
      'user_002\u0000ffffffff-ffff-4fff-8fff-ffffffffffff',
    ]);
    expect(after.facts.map((f) => [f.id, f.provenance.map((p) => p.sessionId)])).toEqual([
      [LISBON_TRIP, [COOKING]],
      [COFFEE, [RUST]],
    ]);
    expect(after.records).toEqual([]);
    // Bob's fact from a conversation of the same id is his.
    expect(await app.fakes.facts.get('user_002', BOBS)).toBeDefined();
    // Nothing left of it: forgetting it again is not an error.
    expect((await forget(`?sessionId=${LISBON}`)).status).toBe(204);
  });

  it('forgets everything of the caller and nothing of anyone else', async () => {
    expect((await forget()).status).toBe(204);
    expect(await (await memories()).json()).toEqual({ facts: [], summaries: [] });
    expect(await app.fakes.facts.list('user_002')).toHaveLength(1);
    expect(app.fakes.summaries.documents.size).toBe(1);
  });

  it("refuses another user's path (403) and bad or ambiguous queries (400), changing nothing", async () => {
    const before = await snapshot();
    await expectProblem(await forget('', 'user_002', 'user_001'), 403, 'forbidden');
    const cases: [string, string][] = [
      [
        '?factid=coffee',
        "unknown parameter 'factid': use factId or sessionId, or neither to forget everything",
      ],
      [`?factId=${COFFEE}&sessionId=${LISBON}`, 'name factId or sessionId, not both'],
      ['?sessionId=lisbon', `sessionId ${ID_FORMATS.sessionId.message}`],
      ['?factId=a%2Fb', 'factId must be a factId that GET /api/memory/users/{userId}/memories shows'],
      ['?factId=', 'factId must be a factId that GET /api/memory/users/{userId}/memories shows'],
      // Dot segments, plain or percent-encoded: the SDK would send them as the container's own URL.
      ...['..', '.', '%2e%2e', '%2E%2E', '.%2e', 'coffee'].map((factId): [string, string] => [
        `?factId=${factId}`,
        'factId must be a factId that GET /api/memory/users/{userId}/memories shows',
      ]),
    ];
    for (const [query, detail] of cases)
      expect((await expectProblem(await forget(query), 400, 'validation_failed')).detail).toBe(
        `Invalid query: ${detail}.`,
      );
    expect(await snapshot()).toEqual(before);
  });
});

describe('POST /api/memory/users/{userId}/conversations/search', () => {
  it("ranks the caller's conversations for the query and names each with its title and date", async () => {
    const reply = await search({ query: 'that Lisbon trip', limit: 2 });
    expect(reply.status).toBe(200);
    const { results } = await reply.json<{ results: ConversationSearchHit[] }>();
    expect(results).toHaveLength(2);
    expect(results[0]).toEqual({
      ...summaryView(app.fakes.summaries.documents.get(`user_001\u0000${LISBON}`)!.document),
      title: 'Planning a trip to Lisbon in May.',
      date: onDay(3),
      score: expect.any(Number) as unknown,
      similarity: 1,
    });
    expect(results[0]!.score).toBeGreaterThan(results[1]!.score);
    // The default limit is 5: all three of user_001's, none of user_002's.
    const all = await (await search({ query: 'lisbon' })).json<{ results: ConversationSearchHit[] }>();
    expect(all.results.map((r) => r.sessionId).sort()).toEqual([LISBON, RUST, COOKING].sort());
  });

  it("refuses another user's path (403) and bad bodies (400)", async () => {
    await expectProblem(await search({ query: 'lisbon' }, 'user_002', 'user_001'), 403, 'forbidden');
    const cases: [unknown, string][] = [
      [{ query: '   ' }, 'query must not be empty'],
      [{ query: 'x'.repeat(1001) }, 'query must be at most 1000 characters'],
      [{ query: 'lisbon', limit: 0 }, 'limit must be at least 1'],
      [{ query: 'lisbon', limit: 21 }, 'limit must be at most 20'],
      [{ query: 'lisbon', limit: 2.5 }, 'limit must be an integer'],
      [{ limit: 2 }, 'query must be a string'],
      [['lisbon'], 'the body must be a JSON object'],
    ];
    for (const [json, detail] of cases)
      expect((await expectProblem(await search(json), 400, 'validation_failed')).detail).toBe(
        `Invalid search: ${detail}.`,
      );
  });
});
