// Memory that knows where it belongs, end to end on a scripted model: what is learned in a project stays in that
// project, what is learned with an assistant that keeps its own memory stays with it, the user's shared memory is
// read everywhere, a fact can be moved only into the caller's own scopes, and another user reaches none of it.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalRuntime } from '../../local/runtime.js';
import { callApi, json, runTurn, startConversation, systemPromptFor } from '../support/api-turns.js';
import { ChatClient } from '../support/chat-client.js';
import { settle, startTestRuntime } from '../support/local-runtime.js';
import {
  startScriptedModel,
  type ChatCompletionRequest,
  type ScriptedModel,
  type ScriptedReply,
} from '../support/scripted-model.js';

interface FactView {
  factId: string;
  statement: string;
  scope: string;
}

/** The profile model adds "The user <words>." for every "I <words>." the user wrote; the rest as little as asked. */
function structured(request: ChatCompletionRequest): object {
  const name = request.response_format?.json_schema?.name;
  if (name === 'memory_profile_changes') {
    const input = JSON.parse(request.messages.findLast((m) => m.role === 'user')?.content ?? '{}') as {
      userMessage?: string;
    };
    const said = [...(input.userMessage ?? '').matchAll(/\bI ([^.]+)\./g)];
    return {
      add: said.map((match) => ({
        category: 'interests',
        statement: `The user ${match[1]}.`,
        evidence: match[0],
      })),
      reaffirm: [],
      replace: [],
      retract: [],
    };
  }
  if (name === 'conversation_summary')
    return { summary: 'A short talk.', themes: [], persons: [], places: [], user_sentiment: 'neutral' };
  if (name === 'exchange_index') return { line: 'A short talk', tags: [], title: 'Talk' };
  if (name === 'session_summary') return { summary: 'Earlier turns.' };
  throw new Error(`unexpected structured request ${String(name)}`);
}

function reply(request: ChatCompletionRequest): ScriptedReply {
  return request.stream === true ? { content: 'Noted.' } : { content: JSON.stringify(structured(request)) };
}

describe('memory scoped to the user, an assistant or a project', () => {
  let model: ScriptedModel;
  let runtime: LocalRuntime;
  let alice: ChatClient;
  let bob: ChatClient;
  /** Words only each test's facts hold, so prompts are told apart. */
  const tag = randomUUID().slice(0, 8);
  const GARDEN = `grow marigolds ${tag}`;
  const BEES = `keep bees ${tag}`;
  const TEA = `drink green tea ${tag}`;
  let gardenProject: string;
  let otherProject: string;
  let beekeeper: string;

  beforeAll(async () => {
    model = await startScriptedModel(reply);
    runtime = await startTestRuntime({ settings: model.settings });
    alice = new ChatClient(runtime.url, 'user_001');
    bob = new ChatClient(runtime.url, 'user_002');
  }, 60_000);
  afterAll(async () => {
    await runtime?.stop();
    await model?.close();
  });

  const call = (client: ChatClient, method: string, path: string, body?: unknown) =>
    callApi(runtime, client, method, path, body);

  /** A new conversation shaped as asked, one turn in it, and the system prompt the model was sent. */
  async function converse(
    shape: { projectId?: string; assistantId?: string },
    text = `Hello ${randomUUID()}.`,
  ): Promise<string> {
    await runTurn(alice, await startConversation(runtime, alice, shape), text);
    await settle(runtime);
    const prompt = systemPromptFor(model, text);
    expect(prompt).toBeDefined();
    return prompt ?? '';
  }

  async function facts(client: ChatClient, query = ''): Promise<FactView[]> {
    const page = await json<{ facts: FactView[] }>(
      await call(client, 'GET', `memory/users/${client.userId}/memories${query}`),
      200,
    );
    return page.facts;
  }

  const factAbout = async (words: string) => (await facts(alice)).find((f) => f.statement.includes(words));

  it('keeps what a project taught in that project, and reads the shared memory everywhere', async () => {
    gardenProject = (
      await json<{ projectId: string }>(await call(alice, 'POST', 'projects', { name: 'Garden' }), 201)
    ).projectId;
    otherProject = (
      await json<{ projectId: string }>(await call(alice, 'POST', 'projects', { name: 'Taxes' }), 201)
    ).projectId;
    await converse({}, `I ${TEA}.`);
    await converse({ projectId: gardenProject }, `I ${GARDEN}.`);

    expect(await factAbout(TEA)).toMatchObject({ scope: 'user' });
    expect(await factAbout(GARDEN)).toMatchObject({ scope: `project:${gardenProject}` });
    // The filter shows one scope's facts only.
    const inGarden = await facts(alice, `?scope=project:${gardenProject}`);
    expect(inGarden.map((f) => f.statement)).toEqual([`The user ${GARDEN}.`]);

    const sameProject = await converse({ projectId: gardenProject });
    expect(sameProject).toContain(GARDEN);
    expect(sameProject).toContain(TEA);
    const otherOne = await converse({ projectId: otherProject });
    expect(otherOne).not.toContain(GARDEN);
    expect(otherOne).toContain(TEA);
    const outside = await converse({});
    expect(outside).not.toContain(GARDEN);
    expect(outside).toContain(TEA);
  }, 120_000);

  it('keeps what an assistant with its own memory learned with that assistant', async () => {
    beekeeper = (
      await json<{ assistantId: string }>(
        await call(alice, 'POST', 'assistants', { name: 'Beekeeper', memory: 'assistant' }),
        201,
      )
    ).assistantId;
    const sharing = (
      await json<{ assistantId: string }>(await call(alice, 'POST', 'assistants', { name: 'Helper' }), 201)
    ).assistantId;
    await converse({ assistantId: beekeeper }, `I ${BEES}.`);
    expect(await factAbout(BEES)).toMatchObject({ scope: `assistant:${beekeeper}` });

    const again = await converse({ assistantId: beekeeper });
    expect(again).toContain(BEES);
    expect(again).toContain(TEA);
    // Another assistant (one that shares the user's memory), a project, no assistant at all: none of them.
    expect(await converse({ assistantId: sharing })).not.toContain(BEES);
    expect(await converse({ projectId: gardenProject })).not.toContain(BEES);
    expect(await converse({})).not.toContain(BEES);
  }, 120_000);

  it('moves a fact into another of the caller’s scopes, and only into those', async () => {
    const garden = await factAbout(GARDEN);
    expect(garden).toBeDefined();
    const path = `memory/users/user_001/memories/${garden!.factId}`;
    const moved = await json<FactView>(
      await call(alice, 'PATCH', path, { scope: `project:${otherProject}` }),
      200,
    );
    expect(moved).toMatchObject({ factId: garden!.factId, scope: `project:${otherProject}` });
    expect(await converse({ projectId: otherProject })).toContain(GARDEN);
    expect(await converse({ projectId: gardenProject })).not.toContain(GARDEN);

    // Bob's project and private assistant are not Alice's to put memory in.
    const bobsProject = (
      await json<{ projectId: string }>(await call(bob, 'POST', 'projects', { name: 'Bob' }), 201)
    ).projectId;
    const bobsAssistant = (
      await json<{ assistantId: string }>(
        await call(bob, 'POST', 'assistants', { name: 'Bob', memory: 'assistant' }),
        201,
      )
    ).assistantId;
    for (const scope of [`project:${bobsProject}`, `assistant:${bobsAssistant}`]) {
      const refused = await call(alice, 'PATCH', path, { scope });
      expect(refused.status).toBe(404);
      expect(refused.headers.get('content-type')).toBe('application/problem+json');
    }
    const malformed = await call(alice, 'PATCH', path, { scope: 'project:../x' });
    expect(malformed.status).toBe(400);
    expect((await factAbout(GARDEN))?.scope).toBe(`project:${otherProject}`);

    // And back into the shared memory: every conversation reads it again.
    await json<FactView>(await call(alice, 'PATCH', path, { scope: 'user' }), 200);
    expect(await converse({})).toContain(GARDEN);
  }, 120_000);

  it('lets another user neither read nor move those facts', async () => {
    const bees = await factAbout(BEES);
    expect(bees).toBeDefined();
    expect((await facts(bob)).some((fact) => fact.statement.includes(tag))).toBe(false);
    expect(await facts(bob, `?scope=assistant:${beekeeper}`)).toEqual([]);
    expect(await facts(bob, `?scope=project:${gardenProject}`)).toEqual([]);
    // Alice's path is not Bob's; under his own, Alice's fact is unknown.
    const theirs = await call(bob, 'PATCH', `memory/users/user_001/memories/${bees!.factId}`, {
      scope: 'user',
    });
    expect(theirs.status).toBe(403);
    expect(theirs.headers.get('content-type')).toBe('application/problem+json');
    const unknown = await call(bob, 'PATCH', `memory/users/user_002/memories/${bees!.factId}`, {
      scope: 'user',
    });
    expect(unknown.status).toBe(404);
    expect(unknown.headers.get('content-type')).toBe('application/problem+json');
    expect((await factAbout(BEES))?.scope).toBe(`assistant:${beekeeper}`);
    // Bob's conversation with Alice's private assistant cannot even start.
    expect((await call(bob, 'POST', 'session/start', { assistantId: beekeeper })).status).toBe(404);
  }, 60_000);

  it('exports each fact with its scope and imports it back only into the caller’s scopes', async () => {
    const exported = await call(alice, 'GET', 'memory/users/user_001/export');
    expect(exported.status).toBe(200);
    const lines = (await exported.text())
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { type: string; statement?: string; scope: string });
    expect(lines.find((line) => line.statement?.includes(BEES))?.scope).toBe(`assistant:${beekeeper}`);
    expect(lines.filter((line) => line.type === 'summary').every((line) => line.scope !== undefined)).toBe(
      true,
    );

    const beesLine = lines
      .filter((line) => line.statement?.includes(BEES))
      .map((line) => JSON.stringify(line));
    const importInto = (client: ChatClient) =>
      call(client, 'POST', `memory/users/${client.userId}/import`, { ndjson: `${beesLine.join('\n')}\n` });
    // Bob may not put memory in Alice's assistant's scope.
    const refused = await importInto(bob);
    expect(refused.status).toBe(404);
    expect((await facts(bob)).some((fact) => fact.statement.includes(tag))).toBe(false);
    // Alice imports it into the same scope: a new fact there (the import's own), then nothing more the second time.
    const first = await json<{ changes: { scope: string }[] }>(await importInto(alice), 200);
    expect(first.changes.map((change) => change.scope)).toEqual([`assistant:${beekeeper}`]);
    const second = await json<{ changes: unknown[]; unchanged: number }>(await importInto(alice), 200);
    expect(second).toMatchObject({ changes: [], unchanged: 1 });
  }, 60_000);
});
