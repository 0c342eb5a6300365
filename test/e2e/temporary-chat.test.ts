// Temporary chats end to end on a scripted model: memory off, in no list or search, kept nowhere but working memory,
// and their session set to expire.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalRuntime } from '../../local/runtime.js';
import {
  SESSIONS_CONTAINER,
  TEMPORARY_CHAT_TTL_SECONDS,
  temporarySessionTtlSeconds,
} from '../../shared/chat/contracts/documents.js';
import { ChatClient } from '../support/chat-client.js';
import { settle, startTestRuntime } from '../support/local-runtime.js';
import { startScriptedModel, type ScriptedModel } from '../support/scripted-model.js';

describe('temporary chats', () => {
  let model: ScriptedModel;
  let runtime: LocalRuntime;
  let alice: ChatClient;

  beforeAll(async () => {
    model = await startScriptedModel(() => ({ content: 'Noted, for now.' }));
    runtime = await startTestRuntime({ settings: model.settings });
    alice = new ChatClient(runtime.url, 'user_001');
  }, 60_000);
  afterAll(async () => {
    await runtime?.stop();
    await model?.close();
  });

  async function start(body: object) {
    const response = await fetch(`${runtime.url}/api/session/start`, {
      method: 'POST',
      headers: alice.headers({ 'content-type': 'application/json' }),
      body: JSON.stringify(body),
    });
    expect(response.status).toBe(201);
    return (await response.json()) as { sessionId: string; temporary?: boolean; memory?: string };
  }

  async function turn(sessionId: string, text: string, extra: object = {}) {
    const chatMessageId = randomUUID();
    expect((await alice.post({ sessionId, chatMessageId, text, ...extra })).status).toBe(202);
    expect((await alice.stream(sessionId, chatMessageId)).at(-1)?.data.type).toBe('message-end');
  }

  async function listed(q?: string): Promise<string[]> {
    const query = q === undefined ? '' : `?q=${encodeURIComponent(q)}`;
    const response = await fetch(`${runtime.url}/api/history/users/user_001/conversations${query}`, {
      headers: alice.headers(),
    });
    expect(response.status).toBe(200);
    const page = (await response.json()) as { conversations: { sessionId: string }[] };
    return page.conversations.map((conversation) => conversation.sessionId);
  }

  it('writes no memory, appears in no list or search, and its session expires', async () => {
    const word = `zebra${randomUUID().slice(0, 8)}`;
    const temporary = await start({ temporary: true });
    expect(temporary).toMatchObject({ temporary: true, memory: 'off' });
    // A message asking for memory in a temporary chat still gets none.
    await turn(temporary.sessionId, `My favourite animal is the ${word}.`, { memory: 'readwrite' });
    const kept = await start({});
    await turn(kept.sessionId, `I also like the ${word}.`);
    await settle(runtime);

    const memory = await runtime.app.chat.turn.workingMemory.load('user_001', temporary.sessionId);
    expect(memory.messages.map((message) => [message.role, message.useMemory])).toEqual([
      ['user', false],
      ['assistant', false],
    ]);
    expect(await listed()).toContain(kept.sessionId);
    expect(await listed()).not.toContain(temporary.sessionId);
    expect(await listed(word)).toEqual([kept.sessionId]);
    // History keeps nothing of it: no message, no summary.
    const conversation = await fetch(`${runtime.url}/api/history/conversations/${temporary.sessionId}`, {
      headers: alice.headers(),
    });
    expect(conversation.status).toBe(404);
    expect(await runtime.app.memory.summaries.get('user_001', temporary.sessionId)).toBeUndefined();

    const { resource } = await runtime.clients.database
      .container(SESSIONS_CONTAINER)
      .item(temporary.sessionId, 'user_001')
      .read<{ ttl?: number }>();
    expect(resource?.ttl).toBe(temporarySessionTtlSeconds(TEMPORARY_CHAT_TTL_SECONDS));
  }, 60_000);
});
