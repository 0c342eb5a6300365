// Assistants and projects end to end on a scripted model: their instructions reach the model, an edited assistant
// leaves earlier conversations as they were, and another user reaches none of them.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalRuntime } from '../../local/runtime.js';
import { callApi, json, roundsFor, runTurn, systemPromptFor as promptSent } from '../support/api-turns.js';
import { ChatClient } from '../support/chat-client.js';
import { startTestRuntime } from '../support/local-runtime.js';
import { startScriptedModel, type ScriptedModel } from '../support/scripted-model.js';

describe('assistants and projects', () => {
  let model: ScriptedModel;
  let runtime: LocalRuntime;
  let alice: ChatClient;
  let bob: ChatClient;

  beforeAll(async () => {
    model = await startScriptedModel(() => ({ content: 'Aye.' }));
    runtime = await startTestRuntime({ settings: { ...model.settings, ASSISTANTS_PUBLISHERS: 'user_001' } });
    alice = new ChatClient(runtime.url, 'user_001');
    bob = new ChatClient(runtime.url, 'user_002');
  }, 60_000);
  afterAll(async () => {
    await runtime?.stop();
    await model?.close();
  });

  const call = (client: ChatClient, method: string, path: string, body?: unknown) =>
    callApi(runtime, client, method, path, body);
  /** The system prompt the model was sent with the turn asking this text. */
  const systemPromptFor = (text: string) => promptSent(model, text);
  const turn = (sessionId: string, text: string) => runTurn(alice, sessionId, text);

  it('sends the assistant’s instructions, and an edit leaves earlier conversations as they were', async () => {
    const created = await json<{ assistantId: string; version: number }>(
      await call(alice, 'POST', 'assistants', {
        name: 'Pirate',
        instructions: 'Always answer like a pirate.',
      }),
      201,
    );
    expect(created.version).toBe(1);
    const before = await json<{ sessionId: string; assistant: { assistantId: string; version: number } }>(
      await call(alice, 'POST', 'session/start', { assistantId: created.assistantId }),
      201,
    );
    expect(before.assistant).toEqual({ assistantId: created.assistantId, version: 1 });
    const first = `ahoy ${randomUUID()}`;
    await turn(before.sessionId, first);
    expect(systemPromptFor(first)).toContain('Always answer like a pirate.');

    const edited = await json<{ version: number }>(
      await call(alice, 'PATCH', `assistants/${created.assistantId}`, {
        instructions: 'Answer like a poet.',
      }),
      200,
    );
    expect(edited.version).toBe(2);
    const later = `again ${randomUUID()}`;
    await turn(before.sessionId, later);
    expect(systemPromptFor(later)).toContain('Always answer like a pirate.');
    expect(systemPromptFor(later)).not.toContain('poet');

    const after = await json<{ sessionId: string }>(
      await call(alice, 'POST', 'session/start', { assistantId: created.assistantId }),
      201,
    );
    const fresh = `verse ${randomUUID()}`;
    await turn(after.sessionId, fresh);
    expect(systemPromptFor(fresh)).toContain('Answer like a poet.');
    expect(systemPromptFor(fresh)).not.toContain('pirate');
  }, 60_000);

  it('sends the project’s instructions to the conversations filed in it', async () => {
    const project = await json<{ projectId: string }>(
      await call(alice, 'POST', 'projects', { name: 'Garden', instructions: 'Answers are about roses.' }),
      201,
    );
    const listed = await json<{ projects: { projectId: string }[] }>(
      await call(alice, 'GET', 'projects'),
      200,
    );
    expect(listed.projects.map((entry) => entry.projectId)).toContain(project.projectId);
    const { sessionId } = await json<{ sessionId: string; projectId: string }>(
      await call(alice, 'POST', 'session/start', { projectId: project.projectId }),
      201,
    );
    const text = `soil ${randomUUID()}`;
    await turn(sessionId, text);
    expect(systemPromptFor(text)).toContain('Answers are about roses.');

    // Filed at its start, listed under the project; another conversation moved in later, and out again.
    const listedIn = async (projectId: string) => {
      const page = await json<{ conversations: { sessionId: string }[] }>(
        await call(alice, 'GET', `history/users/user_001/conversations?projectId=${projectId}`),
        200,
      );
      return page.conversations.map((conversation) => conversation.sessionId);
    };
    expect(await listedIn(project.projectId)).toEqual([sessionId]);
    const other = await json<{ sessionId: string }>(await call(alice, 'POST', 'session/start', {}), 201);
    await turn(other.sessionId, `loose ${randomUUID()}`);
    expect(await listedIn(project.projectId)).toEqual([sessionId]);
    const moved = `history/conversations/${other.sessionId}/project`;
    expect(await json(await call(alice, 'PUT', moved, { projectId: project.projectId }), 200)).toEqual({
      sessionId: other.sessionId,
      projectId: project.projectId,
    });
    expect((await listedIn(project.projectId)).sort()).toEqual([sessionId, other.sessionId].sort());
    await json(await call(alice, 'PUT', moved, { projectId: null }), 200);
    expect(await listedIn(project.projectId)).toEqual([sessionId]);
    // Another user can neither move alice's conversation nor file theirs in alice's project.
    expect((await call(bob, 'PUT', moved, { projectId: project.projectId })).status).toBe(404);
    const bobs = await json<{ sessionId: string }>(await call(bob, 'POST', 'session/start', {}), 201);
    expect(
      (
        await call(bob, 'PUT', `history/conversations/${bobs.sessionId}/project`, {
          projectId: project.projectId,
        })
      ).status,
    ).toBe(404);
  }, 60_000);

  it('gives a conversation moved into a project later that project’s instructions from its next turn', async () => {
    const sea = await json<{ projectId: string }>(
      await call(alice, 'POST', 'projects', { name: 'Sea', instructions: 'Answers are about tides.' }),
      201,
    );
    const lake = await json<{ projectId: string }>(
      await call(alice, 'POST', 'projects', { name: 'Lake', instructions: 'Answers are about reeds.' }),
      201,
    );
    const { sessionId } = await json<{ sessionId: string }>(
      await call(alice, 'POST', 'session/start', {}),
      201,
    );
    const before = `before ${randomUUID()}`;
    await turn(sessionId, before);
    expect(systemPromptFor(before)).not.toContain('Instructions of the project');

    const move = (projectId: string | null) =>
      call(alice, 'PUT', `history/conversations/${sessionId}/project`, { projectId });
    await json(await move(sea.projectId), 200);
    const inSea = `in sea ${randomUUID()}`;
    await turn(sessionId, inSea);
    expect(systemPromptFor(inSea)).toContain('Instructions of the project "Sea":\nAnswers are about tides.');
    // And the turn after, still: the conversation's earlier messages go with it.
    const again = `again ${randomUUID()}`;
    await turn(sessionId, again);
    expect(systemPromptFor(again)).toContain('Answers are about tides.');
    const [sent] = roundsFor(model, again);
    expect(sent?.messages.map((m) => m.content)).toEqual(expect.arrayContaining([before, inSea]));

    // Moved on to another project, then out of any: the prompt follows.
    await json(await move(lake.projectId), 200);
    const inLake = `in lake ${randomUUID()}`;
    await turn(sessionId, inLake);
    expect(systemPromptFor(inLake)).toContain('Answers are about reeds.');
    expect(systemPromptFor(inLake)).not.toContain('Answers are about tides.');
    await json(await move(null), 200);
    const out = `out ${randomUUID()}`;
    await turn(sessionId, out);
    expect(systemPromptFor(out)).not.toContain('Instructions of the project');
  });

  it('lets another user reach none of them, and only publishers make an assistant public', async () => {
    const secret = await json<{ assistantId: string }>(
      await call(alice, 'POST', 'assistants', { name: 'Secret', instructions: 'x' }),
      201,
    );
    const project = await json<{ projectId: string }>(
      await call(alice, 'POST', 'projects', { name: 'Mine' }),
      201,
    );
    for (const [method, path, body] of [
      ['GET', `assistants/${secret.assistantId}`, undefined],
      ['PATCH', `assistants/${secret.assistantId}`, { name: 'taken' }],
      ['DELETE', `assistants/${secret.assistantId}`, undefined],
      ['GET', `projects/${project.projectId}`, undefined],
      ['PATCH', `projects/${project.projectId}`, { name: 'taken' }],
      ['DELETE', `projects/${project.projectId}?conversations=unfile`, undefined],
      ['POST', 'session/start', { assistantId: secret.assistantId }],
      ['POST', 'session/start', { projectId: project.projectId }],
    ] as const)
      expect((await call(bob, method, path, body)).status, `${method} ${path}`).toBe(404);
    const bobsList = await json<{ assistants: { assistantId: string }[] }>(
      await call(bob, 'GET', 'assistants'),
      200,
    );
    expect(bobsList.assistants.map((entry) => entry.assistantId)).not.toContain(secret.assistantId);
    expect((await call(bob, 'GET', 'projects')).status).toBe(200);
    expect(((await (await call(bob, 'GET', 'projects')).json()) as { projects: unknown[] }).projects).toEqual(
      [],
    );

    // Publishing: alice may (ASSISTANTS_PUBLISHERS), bob may not; bob sees and uses a public one, but cannot change it.
    expect((await call(bob, 'POST', 'assistants', { name: 'Mine', visibility: 'public' })).status).toBe(403);
    const shared = await json<{ assistantId: string }>(
      await call(alice, 'POST', 'assistants', { name: 'Shared', visibility: 'public' }),
      201,
    );
    expect((await call(bob, 'GET', `assistants/${shared.assistantId}`)).status).toBe(200);
    expect((await call(bob, 'POST', 'session/start', { assistantId: shared.assistantId })).status).toBe(201);
    expect((await call(bob, 'PATCH', `assistants/${shared.assistantId}`, { name: 'x' })).status).toBe(403);
    expect((await call(bob, 'DELETE', `assistants/${shared.assistantId}`)).status).toBe(403);

    // The owner deletes: then it is gone for everyone.
    expect((await call(alice, 'DELETE', `projects/${project.projectId}?conversations=unfile`)).status).toBe(
      204,
    );
    expect((await call(alice, 'GET', `projects/${project.projectId}`)).status).toBe(404);
    expect((await call(alice, 'DELETE', `assistants/${secret.assistantId}`)).status).toBe(204);
    expect((await call(alice, 'GET', `assistants/${secret.assistantId}`)).status).toBe(404);
  }, 60_000);
});
