// A conversation's knowledge follows its assistant and its project, end to end on a scripted model: the knowledge
// search the model calls reads only the documents they name, every document outside them, and never a document of
// another user whatever a project names.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalRuntime } from '../../local/runtime.js';
import { callApi, json, startConversation } from '../support/api-turns.js';
import { ChatClient, expectStatus } from '../support/chat-client.js';
import { settle, startTestRuntime } from '../support/local-runtime.js';
import { searchedTitlesIn, startSearchingModel, uploadDocument } from '../support/knowledge-search.js';
import type { ScriptedModel } from '../support/scripted-model.js';

const HEAVY = 120_000;

describe("a conversation's knowledge follows its assistant and project", () => {
  let model: ScriptedModel;
  let runtime: LocalRuntime;
  let alice: ChatClient;
  let bob: ChatClient;
  /** Document ids by title: alice's Roses and Tulips, bob's Cacti. */
  const documents = new Map<string, string>();

  const call = (client: ChatClient, method: string, path: string, body?: unknown) =>
    callApi(runtime, client, method, path, body);

  async function upload(client: ChatClient, title: string, text: string): Promise<void> {
    documents.set(title, await uploadDocument(runtime, client, title, text));
  }

  const id = (title: string) => documents.get(title) ?? '';

  beforeAll(async () => {
    model = await startSearchingModel();
    runtime = await startTestRuntime({ settings: model.settings });
    alice = new ChatClient(runtime.url, 'user_001');
    bob = new ChatClient(runtime.url, 'user_002');
    await upload(alice, 'Roses', 'The garden roses flower in June along the south wall.');
    await upload(alice, 'Tulips', 'The garden tulips flower in April beside the pond.');
    await upload(bob, 'Cacti', 'The garden cacti flower in May on the windowsill.');
    await settle(runtime);
    for (const [title, documentId] of documents) {
      const owner = title === 'Cacti' ? bob : alice;
      const { document } = await expectStatus<{ document: { status: string } }>(
        await call(owner, 'GET', `knowledge/documents/${documentId}`),
        200,
      );
      expect(document.status, title).toBe('ready');
    }
  }, HEAVY);
  afterAll(async () => {
    await runtime?.stop();
    await model?.close();
  });

  const start = (body: Record<string, unknown>) => startConversation(runtime, alice, body);

  /**
   * Runs one turn (the model searches the knowledge base, then answers) and returns the titles of the passages the
   * search's result gave the model, as the model received it.
   */
  async function searchedTitles(sessionId: string): Promise<string[]> {
    const text = `what grows in the garden? ${randomUUID()}`;
    const chatMessageId = randomUUID();
    expect((await alice.post({ sessionId, chatMessageId, text })).status).toBe(202);
    const frames = await alice.stream(sessionId, chatMessageId);
    expect(frames.at(-1)?.data.type).toBe('message-end');
    return searchedTitlesIn(model, text);
  }

  it(
    'searches the project’s documents in its conversations, and every document outside until one is moved in',
    async () => {
      const project = await json<{ projectId: string }>(
        await call(alice, 'POST', 'projects', { name: 'Beds', knowledge: { documentIds: [id('Roses')] } }),
        201,
      );
      expect(await searchedTitles(await start({ projectId: project.projectId }))).toEqual(['Roses']);

      const loose = await start({});
      expect(await searchedTitles(loose)).toEqual(['Roses', 'Tulips']);
      // Moved into the project, its next turn searches the project's documents.
      await json(
        await call(alice, 'PUT', `history/conversations/${loose}/project`, { projectId: project.projectId }),
        200,
      );
      expect(await searchedTitles(loose)).toEqual(['Roses']);
      // And out again: every document once more.
      await json(
        await call(alice, 'PUT', `history/conversations/${loose}/project`, { projectId: null }),
        200,
      );
      expect(await searchedTitles(loose)).toEqual(['Roses', 'Tulips']);
    },
    HEAVY,
  );

  it(
    'searches the project’s documents as they are now in a conversation begun before they changed',
    async () => {
      const project = await json<{ projectId: string }>(
        await call(alice, 'POST', 'projects', { name: 'Later', knowledge: { documentIds: [id('Roses')] } }),
        201,
      );
      const sessionId = await start({ projectId: project.projectId });
      expect(await searchedTitles(sessionId)).toEqual(['Roses']);
      const knowledge = (...titles: string[]) =>
        call(alice, 'PATCH', `projects/${project.projectId}`, {
          knowledge: { documentIds: titles.map(id) },
        });
      // A document added to the project after the conversation began is found by its next search.
      await json(await knowledge('Roses', 'Tulips'), 200);
      expect(await searchedTitles(sessionId)).toEqual(['Roses', 'Tulips']);
      // One taken out is not.
      await json(await knowledge('Tulips'), 200);
      expect(await searchedTitles(sessionId)).toEqual(['Tulips']);
      // Another user's document the project names later is never searched.
      await json(await knowledge('Tulips', 'Cacti'), 200);
      expect(await searchedTitles(sessionId)).toEqual(['Tulips']);
    },
    HEAVY,
  );

  it(
    'searches the assistant’s documents, joined with its project’s',
    async () => {
      const assistant = await json<{ assistantId: string }>(
        await call(alice, 'POST', 'assistants', {
          name: 'Bulbs',
          instructions: 'Talk about bulbs.',
          knowledge: { documentIds: [id('Tulips')] },
        }),
        201,
      );
      expect(await searchedTitles(await start({ assistantId: assistant.assistantId }))).toEqual(['Tulips']);

      const project = await json<{ projectId: string }>(
        await call(alice, 'POST', 'projects', { name: 'Border', knowledge: { documentIds: [id('Roses')] } }),
        201,
      );
      expect(
        await searchedTitles(
          await start({ assistantId: assistant.assistantId, projectId: project.projectId }),
        ),
      ).toEqual(['Roses', 'Tulips']);
    },
    HEAVY,
  );

  it(
    'never searches a document of another user that a project names',
    async () => {
      const project = await json<{ projectId: string }>(
        await call(alice, 'POST', 'projects', {
          name: 'Borrowed',
          knowledge: { documentIds: [id('Cacti'), id('Tulips')] },
        }),
        201,
      );
      expect(await searchedTitles(await start({ projectId: project.projectId }))).toEqual(['Tulips']);

      const only = await json<{ projectId: string }>(
        await call(alice, 'POST', 'projects', { name: 'Theirs', knowledge: { documentIds: [id('Cacti')] } }),
        201,
      );
      expect(await searchedTitles(await start({ projectId: only.projectId }))).toEqual([]);
    },
    HEAVY,
  );
});
