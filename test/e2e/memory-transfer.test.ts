// Memory to take away and bring back, end to end over the local runtime with a scripted model: one user's export
// imported into another reproduces the facts, a dry run writes nothing, a second import adds nothing, and no one
// reaches another user's memory.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalRuntime } from '../../local/runtime.js';
import { PROFILE_FACTS_CONTAINER, type ProfileFact } from '../../shared/memory/contracts.js';
import { ChatClient, expectStatus, type RealtimeListener } from '../support/chat-client.js';
import { settle, startTestRuntime } from '../support/local-runtime.js';
import {
  startScriptedModel,
  type ChatCompletionRequest,
  type ScriptedModel,
} from '../support/scripted-model.js';

const STATEMENTS = 'I love sailing, and my daughter Maya is learning to swim in Lisbon.';

interface ProfileInput {
  userMessage: string;
  activeFacts: { factId: string; category: string; statement: string }[];
}

/** The profile model: facts quoted from the user's words, and nothing it already knows. */
function profileChanges(input: ProfileInput): object {
  const text = input.userMessage;
  const known = (statement: string) => input.activeFacts.some((fact) => fact.statement === statement);
  const add: object[] = [];
  const propose = (category: string, statement: string, evidence: string) => {
    if (text.includes(evidence) && !known(statement)) add.push({ category, statement, evidence });
  };
  propose('interests', 'The user loves sailing.', 'I love sailing');
  propose('family_and_friends', "The user's daughter Maya is learning to swim.", 'my daughter Maya');
  propose('work_profile', 'The user works as a nurse.', 'I work as a nurse');
  return { add, reaffirm: [], replace: [], retract: [] };
}

function structured(request: ChatCompletionRequest): object {
  const name = request.response_format?.json_schema?.name;
  const content = request.messages.at(-1)?.content ?? '{}';
  if (name === 'memory_profile_changes') return profileChanges(JSON.parse(content) as ProfileInput);
  if (name === 'conversation_summary')
    return {
      summary: 'The user talked about sailing.',
      themes: ['sailing'],
      persons: ['Maya'],
      places: ['Lisbon'],
      user_sentiment: 'positive',
    };
  if (name === 'exchange_index') return { line: 'Q: sailing', tags: ['chat'], title: 'Sailing' };
  if (name === 'session_summary') return { summary: 'Earlier turns.' };
  throw new Error(`unexpected structured request ${String(name)}`);
}

type FactView = Omit<ProfileFact, 'id' | 'kind'> & { factId: string };
interface ImportResult {
  dryRun: boolean;
  changes: { op: string; factId: string; statement?: string }[];
  unchanged: number;
  skipped: number;
}

describe('memory export and import', () => {
  let model: ScriptedModel;
  let runtime: LocalRuntime;
  let alice: ChatClient;
  let bob: ChatClient;
  let live: RealtimeListener;
  let exported = '';

  beforeAll(async () => {
    model = await startScriptedModel((request) =>
      request.stream === true ? { content: 'Noted.' } : { content: JSON.stringify(structured(request)) },
    );
    runtime = await startTestRuntime({ settings: model.settings });
    alice = new ChatClient(runtime.url, 'user_001');
    bob = new ChatClient(runtime.url, 'user_002');
    live = await alice.listen();
  }, 60_000);
  afterAll(async () => {
    live?.stop();
    await runtime?.stop();
    await model?.close();
  });

  const url = (userId: string, path: string) => `${runtime.url}/api/memory/users/${userId}/${path}`;

  async function facts(as: ChatClient): Promise<FactView[]> {
    const page = await expectStatus<{ facts: FactView[] }>(
      await fetch(url(as.userId, 'memories'), { headers: as.headers() }),
      200,
    );
    return page.facts;
  }

  /** The user's facts and records (beside them, the copy of the active facts is not counted). */
  async function storedItems(userId: string): Promise<number> {
    const { resources } = await runtime.clients.database
      .container(PROFILE_FACTS_CONTAINER)
      .items.query<number>({
        query: "SELECT VALUE COUNT(1) FROM c WHERE c.userId = @userId AND c.kind != 'active-facts'",
        parameters: [{ name: '@userId', value: userId }],
      })
      .fetchAll();
    return resources[0] ?? 0;
  }

  function importFile(as: ChatClient, ndjson: string, query = '', userId = as.userId) {
    const form = new FormData();
    form.append('file', new Blob([ndjson], { type: 'application/x-ndjson' }), 'memory.ndjson');
    return fetch(url(userId, `import${query}`), { method: 'POST', headers: as.headers(), body: form });
  }

  it('exports every fact and summary as NDJSON lines with scope and provenance', async () => {
    const sessionId = await alice.startSession();
    const chatMessageId = crypto.randomUUID();
    await expectStatus(await alice.post({ sessionId, chatMessageId, text: STATEMENTS }), 202);
    await live.waitForTerminal(chatMessageId);
    await settle(runtime);
    expect((await facts(alice)).map((fact) => fact.statement).sort()).toEqual([
      'The user loves sailing.',
      "The user's daughter Maya is learning to swim.",
    ]);

    const response = await fetch(url(alice.userId, 'export'), { headers: alice.headers() });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^application\/x-ndjson/);
    exported = await response.text();
    const lines = exported
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    const factLines = lines.filter((line) => line.type === 'fact');
    const summaryLines = lines.filter((line) => line.type === 'summary');
    expect(factLines).toHaveLength(2);
    expect(summaryLines).toHaveLength(1);
    for (const line of lines) expect(line.scope).toBe('user');
    for (const line of factLines) {
      expect(line).toMatchObject({ status: 'active', validFrom: expect.any(String) });
      expect(line.provenance).toEqual([expect.objectContaining({ sessionId, chatMessageId })]);
    }
    expect(summaryLines[0]).toMatchObject({ sessionId, summary: 'The user talked about sailing.' });
    expect(summaryLines[0]).not.toHaveProperty('vector_embedding');
  }, 60_000);

  it('shows what an import would change without writing it', async () => {
    const profileCalls = model.requests.length;
    const result = await expectStatus<ImportResult>(await importFile(bob, exported, '?dryRun=true'), 200);
    expect(result.dryRun).toBe(true);
    expect(result.changes.map((change) => [change.op, change.statement]).sort()).toEqual([
      ['add', 'The user loves sailing.'],
      ['add', "The user's daughter Maya is learning to swim."],
    ]);
    expect(result.skipped).toBe(1);
    expect(await storedItems(bob.userId)).toBe(0);
    // Fact lines need no model.
    expect(model.requests.length).toBe(profileCalls);
  });

  it("reproduces the facts in another user's profile with provenance `import`, and adds nothing the second time", async () => {
    const first = await expectStatus<ImportResult>(await importFile(bob, exported), 200);
    expect(first.changes).toHaveLength(2);
    const imported = await facts(bob);
    const original = (await facts(alice)).filter((fact) => fact.status === 'active');
    expect(imported.map((fact) => [fact.category, fact.statement, fact.validFrom]).sort()).toEqual(
      original.map((fact) => [fact.category, fact.statement, fact.validFrom]).sort(),
    );
    for (const fact of imported)
      expect(fact.provenance.map((source) => source.sessionId)).toEqual(['import']);

    const again = await expectStatus<ImportResult>(await importFile(bob, exported), 200);
    expect(again).toMatchObject({ changes: [], unchanged: 2 });
    expect(await facts(bob)).toEqual(imported);
    expect(await storedItems(bob.userId)).toBe(2);
  });

  it('merges plain statements through the profile model, once', async () => {
    const send = () =>
      fetch(url(bob.userId, 'import'), {
        method: 'POST',
        headers: bob.headers({ 'content-type': 'application/json' }),
        body: JSON.stringify({ statements: ['I work as a nurse.', 'I love sailing.'] }),
      });
    const before = model.requests.length;
    const first = await expectStatus<ImportResult>(await send(), 200);
    expect(first.changes).toEqual([
      expect.objectContaining({ op: 'add', statement: 'The user works as a nurse.' }),
    ]);
    expect(model.requests.length).toBe(before + 1);
    const again = await expectStatus<ImportResult>(await send(), 200);
    expect(again.changes).toEqual([]);
    expect((await facts(bob)).map((fact) => fact.statement)).toHaveLength(3);
  });

  it("refuses another user's export and import, a malformed line and a file past the limit", async () => {
    expect((await fetch(url(alice.userId, 'export'), { headers: bob.headers() })).status).toBe(403);
    expect((await importFile(bob, exported, '', alice.userId)).status).toBe(403);
    const bad = await importFile(bob, '{"type":"fact","scope":"user"}\n');
    expect(bad.status).toBe(400);
    expect(await bad.text()).toMatch(/Line 1/);
    expect((await importFile(bob, 'x'.repeat(1024 * 1024 + 10))).status).toBe(413);
    expect(await storedItems(alice.userId)).toBeGreaterThan(0);
    expect((await facts(bob)).map((fact) => fact.statement)).toHaveLength(3);
  });
});
