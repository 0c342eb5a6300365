// The model catalogue end to end on a scripted model: the model each turn calls is the conversation's choice (or
// the message's own), a regenerate with another model records which one answered, and a model the caller may not
// use is refused with a 403 naming it.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalRuntime } from '../../local/runtime.js';
import { ChatClient } from '../support/chat-client.js';
import { startTestRuntime } from '../support/local-runtime.js';
import { SCRIPTED_MODEL, startScriptedModel, type ScriptedModel } from '../support/scripted-model.js';

const DEEP = 'deep-model';

const CATALOGUE = JSON.stringify([
  { id: SCRIPTED_MODEL, label: 'Fast', contextWindow: 128000 },
  {
    id: DEEP,
    label: 'Deep',
    capabilities: { reasoning: true },
    price: { input: 5, output: 20 },
    allow: ['user_001'],
  },
]);

describe('the model catalogue', () => {
  let model: ScriptedModel;
  let runtime: LocalRuntime;
  let alice: ChatClient;
  let bob: ChatClient;

  beforeAll(async () => {
    model = await startScriptedModel((request) => ({ content: `answered by ${request.model}` }));
    runtime = await startTestRuntime({ settings: { ...model.settings, LLM_MODELS: CATALOGUE } });
    alice = new ChatClient(runtime.url, 'user_001');
    bob = new ChatClient(runtime.url, 'user_002');
  }, 60_000);
  afterAll(async () => {
    await runtime?.stop();
    await model?.close();
  });

  /** The models the streamed chat requests asking this text (their last user message) were sent to. */
  const modelsAsked = (text: string) =>
    model.requests
      .filter((request) => request.stream === true)
      .filter((request) => request.messages.findLast((message) => message.role === 'user')?.content === text)
      .map((request) => request.model);

  async function start(client: ChatClient, body: Record<string, unknown>) {
    return fetch(`${runtime.url}/api/session/start`, {
      method: 'POST',
      headers: client.headers({ 'content-type': 'application/json' }),
      body: JSON.stringify(body),
    });
  }

  async function turn(
    client: ChatClient,
    sessionId: string,
    text: string,
    extra: Record<string, unknown> = {},
  ) {
    const chatMessageId = randomUUID();
    const response = await client.post({ sessionId, chatMessageId, text, ...extra });
    expect(response.status).toBe(202);
    const frames = await client.stream(sessionId, chatMessageId);
    expect(frames.at(-1)?.data.type).toBe('message-end');
    return chatMessageId;
  }

  it('lists the models the caller may use, the default first', async () => {
    const list = async (client: ChatClient) => {
      const response = await fetch(`${runtime.url}/api/models`, { headers: client.headers() });
      expect(response.status).toBe(200);
      return (await response.json()) as { models: { id: string; default: boolean }[]; defaultModel: string };
    };
    const forAlice = await list(alice);
    expect(forAlice.models.map((entry) => [entry.id, entry.default])).toEqual([
      [SCRIPTED_MODEL, true],
      [DEEP, false],
    ]);
    expect((await list(bob)).models.map((entry) => entry.id)).toEqual([SCRIPTED_MODEL]);
  });

  it("calls the conversation's model on every turn, and the message's own when it names one", async () => {
    const started = await start(alice, { model: DEEP });
    expect(started.status).toBe(201);
    const session = (await started.json()) as { sessionId: string; model: string };
    expect(session.model).toBe(DEEP);
    const first = `first ${randomUUID()}`;
    const second = `second ${randomUUID()}`;
    const third = `third ${randomUUID()}`;
    await turn(alice, session.sessionId, first);
    await turn(alice, session.sessionId, second);
    await turn(alice, session.sessionId, third, { model: SCRIPTED_MODEL });
    expect(modelsAsked(first)).toEqual([DEEP]);
    expect(modelsAsked(second)).toEqual([DEEP]);
    expect(modelsAsked(third)).toEqual([SCRIPTED_MODEL]);

    // A conversation started without a model runs on the default.
    const plain = (await (await start(alice, {})).json()) as { sessionId: string; model: string };
    expect(plain.model).toBe(SCRIPTED_MODEL);
    const other = `plain ${randomUUID()}`;
    await turn(alice, plain.sessionId, other);
    expect(modelsAsked(other)).toEqual([SCRIPTED_MODEL]);
  }, 60_000);

  it('takes the model of a useChat message from its body', async () => {
    const text = `ui ${randomUUID()}`;
    const aiSdkId = () => randomUUID().replaceAll('-', '').slice(0, 16);
    const response = await fetch(`${runtime.url}/api/ui/chat`, {
      method: 'POST',
      headers: alice.headers({ 'content-type': 'application/json' }),
      body: JSON.stringify({
        id: aiSdkId(),
        trigger: 'submit-message',
        messages: [{ id: aiSdkId(), role: 'user', parts: [{ type: 'text', text }] }],
        model: DEEP,
      }),
    });
    expect(response.status).toBe(200);
    expect(await response.text()).toContain('"type":"finish"');
    expect(modelsAsked(text)).toEqual([DEEP]);
  }, 60_000);

  it('regenerates with another model, and the alternative records which model answered', async () => {
    const { sessionId } = (await (await start(alice, {})).json()) as { sessionId: string };
    const text = `regenerate ${randomUUID()}`;
    const answered = await turn(alice, sessionId, text);
    const again = randomUUID();
    const response = await fetch(`${runtime.url}/api/chat/${sessionId}/${answered}/regenerate`, {
      method: 'POST',
      headers: alice.headers({ 'content-type': 'application/json' }),
      body: JSON.stringify({ chatMessageId: again, model: DEEP }),
    });
    expect(response.status).toBe(202);
    await alice.stream(sessionId, again);
    expect(modelsAsked(text)).toEqual([SCRIPTED_MODEL, DEEP]);
    const memory = await runtime.app.chat.turn.workingMemory.load('user_001', sessionId);
    const answers = [...memory.messages, ...(memory.offPath ?? [])].filter(
      (message) => message.role === 'assistant',
    );
    const byTurn = Object.fromEntries(answers.map((message) => [message.chatMessageId, message.model]));
    expect(byTurn).toEqual({ [answered]: SCRIPTED_MODEL, [again]: DEEP });
  }, 60_000);

  it('refuses a model the caller may not use, or one the catalogue does not list, with a 403 naming it', async () => {
    const refused = await start(bob, { model: DEEP });
    expect(refused.status).toBe(403);
    expect(((await refused.json()) as { detail: string }).detail).toContain(DEEP);
    expect((await start(alice, { model: 'no-such-model' })).status).toBe(403);

    const { sessionId } = (await (await start(bob, {})).json()) as { sessionId: string };
    const asked = await bob.post({ sessionId, chatMessageId: randomUUID(), text: 'hi', model: DEEP });
    expect(asked.status).toBe(403);
    expect(((await asked.json()) as { detail: string }).detail).toContain(DEEP);
  }, 60_000);
});
