// The OpenAI-compatible API with personal API keys, end to end on a scripted model: the official `openai` package
// with a key and no other identity reaches its owner's documents through the knowledge search the model calls, and
// none of another user's documents or conversations.
import { randomUUID } from 'node:crypto';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalRuntime } from '../../local/runtime.js';
import { callApi, json, startConversation } from '../support/api-turns.js';
import { ChatClient, expectStatus } from '../support/chat-client.js';
import { settle, startTestRuntime } from '../support/local-runtime.js';
import { searchedTitlesIn, startSearchingModel, uploadDocument } from '../support/knowledge-search.js';
import type { ScriptedModel } from '../support/scripted-model.js';

const HEAVY = 120_000;

describe('the OpenAI-compatible API with a personal API key', () => {
  let model: ScriptedModel;
  let runtime: LocalRuntime;
  let alice: ChatClient;
  let bob: ChatClient;
  const keys = new Map<string, string>();

  const upload = (client: ChatClient, title: string, text: string) =>
    uploadDocument(runtime, client, title, text);

  beforeAll(async () => {
    model = await startSearchingModel();
    runtime = await startTestRuntime({ settings: model.settings });
    alice = new ChatClient(runtime.url, 'user_001');
    bob = new ChatClient(runtime.url, 'user_002');
    const uploaded = [
      [alice, await upload(alice, 'Roses', 'The garden roses flower in June along the south wall.')],
      [bob, await upload(bob, 'Cacti', 'The garden cacti flower in May on the windowsill.')],
    ] as const;
    await settle(runtime);
    for (const [owner, documentId] of uploaded) {
      const { document } = await expectStatus<{ document: { status: string } }>(
        await callApi(runtime, owner, 'GET', `knowledge/documents/${documentId}`),
        200,
      );
      expect(document.status).toBe('ready');
    }
    for (const [name, client] of [
      ['alice', alice],
      ['bob', bob],
    ] as const) {
      const created = await json<{ key: string }>(
        await callApi(runtime, client, 'POST', 'api-keys', { name: 'openai sdk' }),
        201,
      );
      keys.set(name, created.key);
    }
  }, HEAVY);
  afterAll(async () => {
    await runtime?.stop();
    await model?.close();
  });

  /** The `openai` package as a program holding only the key: no identity header of any kind. */
  const withKey = (name: string, headers: Record<string, string> = {}) =>
    new OpenAI({
      baseURL: `${runtime.url}/api/v1`,
      apiKey: keys.get(name) ?? '',
      defaultHeaders: headers,
      maxRetries: 0,
    });

  /** One completion through the key; the titles the knowledge search gave the model for it. */
  async function searchedTitles(name: string): Promise<string[]> {
    const text = `what grows in the garden? ${randomUUID()}`;
    const completion = await withKey(name).chat.completions.create({
      model: runtime.app.config.models.defaultModel,
      messages: [{ role: 'user', content: text }],
    });
    expect(completion.choices[0]?.message.content).toBe('Found it.');
    return searchedTitlesIn(model, text);
  }

  it(
    "searches only its owner's documents, whoever else has some",
    async () => {
      expect(await searchedTitles('alice')).toEqual(['Roses']);
      expect(await searchedTitles('bob')).toEqual(['Cacti']);
    },
    HEAVY,
  );

  it(
    "cannot continue another user's conversation, and a key is no sign-in elsewhere",
    async () => {
      const bobs = await startConversation(runtime, bob, {});
      const refused = await withKey('alice', { 'x-conversation-id': bobs })
        .chat.completions.create({
          model: runtime.app.config.models.defaultModel,
          messages: [{ role: 'user', content: 'what did we say?' }],
        })
        .then(
          () => undefined,
          (error: unknown) => error,
        );
      expect(refused).toBeInstanceOf(OpenAI.NotFoundError);
      // The owner's own key continues it.
      const own = await withKey('bob', { 'x-conversation-id': bobs }).chat.completions.create({
        model: runtime.app.config.models.defaultModel,
        messages: [{ role: 'user', content: `what grows in the garden? ${randomUUID()}` }],
      });
      expect(own.choices[0]?.message.content).toBe('Found it.');
      // A key opens the OpenAI-compatible routes and MCP only: the History API refuses it.
      const history = await fetch(`${runtime.url}/api/history/users/user_001/conversations`, {
        headers: { authorization: `Bearer ${keys.get('alice') ?? ''}` },
      });
      expect(history.status).toBe(401);
    },
    HEAVY,
  );
});
