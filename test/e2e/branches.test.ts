// Branches end to end over the local runtime with a scripted model: regenerate, edit and switch, each prompt
// holding only its branch, and another user's attempts refused like unknown ones.
import { randomUUID } from 'node:crypto';
import type { InvocationContext } from '@azure/functions';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FunctionDefinition } from '../../functions/definition.js';
import { functionDefinitions } from '../../functions/table.js';
import type { LocalRuntime } from '../../local/runtime.js';
import { TURN_ACTIVITIES } from '../../shared/chat/contracts/activities.js';
import type { ConversationMessage } from '../../shared/conversation/messages.js';
import type { ConversationWithMessages, HistoryMessage } from '../../shared/history/contracts.js';
import { ChatClient, expectStatus, type RealtimeListener } from '../support/chat-client.js';
import { settle, startTestRuntime } from '../support/local-runtime.js';
import { withRuntimeHotStore } from '../support/runtime-hot-store.js';
import {
  startScriptedModel,
  type ChatCompletionRequest,
  type ScriptedModel,
  type ScriptedReply,
} from '../support/scripted-model.js';

/** What the history and memory workers ask for, answered as a careful model would (nothing to learn here). */
function structured(request: ChatCompletionRequest): object {
  const name = request.response_format?.json_schema?.name;
  const input = JSON.parse(request.messages.at(-1)?.content ?? '{}') as { question?: string };
  if (name === 'exchange_index') return { line: `Q: ${(input.question ?? '').slice(0, 60)}`, tags: ['chat'] };
  if (name === 'session_summary') return { summary: 'Earlier turns.' };
  if (name === 'memory_profile_changes') return { add: [], reaffirm: [], replace: [], retract: [] };
  if (name === 'conversation_summary')
    return { summary: 'A chat.', themes: ['chat'], persons: [], places: [], user_sentiment: 'neutral' };
  throw new Error(`unexpected structured request ${String(name)}`);
}

/** The user/assistant text of a request, without the system messages. */
const said = (request: ChatCompletionRequest) =>
  request.messages.filter((m) => m.role === 'user' || m.role === 'assistant').map((m) => m.content ?? '');

describe('branches: regenerate, edit, switch', () => {
  let model: ScriptedModel;
  let runtime: LocalRuntime;
  let alice: ChatClient;
  let bob: ChatClient;
  let live: RealtimeListener;
  /** How often each question was answered: a regenerate answers differently. */
  const answered = new Map<string, number>();
  /** While set, a model round waits for it before it starts (a turn "still running"). */
  let hold: Promise<void> | undefined;

  beforeAll(async () => {
    model = await startScriptedModel((request): ScriptedReply => {
      if (request.stream !== true) return { content: JSON.stringify(structured(request)) };
      const question = request.messages.at(-1)?.content ?? '';
      const n = (answered.get(question) ?? 0) + 1;
      answered.set(question, n);
      return { content: `Answer ${n} to: ${question}` };
    });
    const functions: FunctionDefinition[] = functionDefinitions.map((definition) =>
      definition.kind === 'activity' && definition.name === TURN_ACTIVITIES.llmStep
        ? {
            ...definition,
            handler: async (input: unknown, context: InvocationContext): Promise<unknown> => {
              await hold;
              return (await definition.handler(input, context)) as unknown;
            },
          }
        : definition,
    );
    runtime = await startTestRuntime({ settings: model.settings, functions });
    alice = new ChatClient(runtime.url, 'user_001');
    bob = new ChatClient(runtime.url, 'user_002');
    live = await alice.listen();
  });
  afterAll(async () => {
    live?.stop();
    await runtime?.stop();
    await model?.close();
  });

  const api = (client: ChatClient, path: string, init: RequestInit = {}) =>
    fetch(`${runtime.url}/api/${path}`, {
      ...init,
      headers: client.headers({ 'content-type': 'application/json' }),
    });

  /** Waits for the turn's end (and the workers), and gives the streamed model request it made. */
  async function finish(chatMessageId: string, from: number) {
    const events = await live.waitForTerminal(chatMessageId);
    expect(events.at(-1)).toMatchObject({ type: 'message-end' });
    await settle(runtime);
    const request = model.requests.slice(from).find((r) => r.stream === true);
    return { events, request: request! };
  }

  async function ask(sessionId: string, text: string, extra: Record<string, unknown> = {}) {
    const from = model.requests.length;
    const chatMessageId = randomUUID();
    await expectStatus(await alice.post({ sessionId, chatMessageId, text, ...extra }), 202);
    return { chatMessageId, ...(await finish(chatMessageId, from)) };
  }

  async function regenerate(sessionId: string, of: string) {
    const from = model.requests.length;
    const chatMessageId = randomUUID();
    const accepted = await expectStatus<{ chatMessageId: string; status: string; stream: string }>(
      await api(alice, `chat/${sessionId}/${of}/regenerate`, {
        method: 'POST',
        body: JSON.stringify({ chatMessageId }),
      }),
      202,
    );
    expect(accepted).toMatchObject({ chatMessageId, status: 'queued' });
    expect(accepted.stream).toMatch(new RegExp(`^/api/stream/${sessionId}/${chatMessageId}\\?ticket=`));
    return { chatMessageId, ...(await finish(chatMessageId, from)) };
  }

  const conversation = async (sessionId: string, query = '') =>
    expectStatus<ConversationWithMessages>(
      await api(alice, `history/conversations/${sessionId}${query}`),
      200,
    );

  const switchTo = async (sessionId: string, chatMessageId: string) =>
    expectStatus<ConversationWithMessages>(
      await api(alice, `history/conversations/${sessionId}/branch`, {
        method: 'PUT',
        body: JSON.stringify({ chatMessageId }),
      }),
      200,
    );

  const texts = (messages: readonly HistoryMessage[]) => messages.map((m) => m.content);

  it('regenerates an answer and keeps the first one retrievable as an alternative', async () => {
    const sessionId = await alice.startSession();
    const first = await ask(sessionId, 'Name a colour');
    const second = await ask(sessionId, 'Name a fruit');
    const again = await regenerate(sessionId, second.chatMessageId);

    // The new answer's prompt has the turn before, not the answer it replaces; the question is asked once.
    expect(said(again.request)).toEqual(['Name a colour', 'Answer 1 to: Name a colour', 'Name a fruit']);
    const shown = await conversation(sessionId);
    expect(texts(shown.messages)).toEqual([
      'Name a colour',
      'Answer 1 to: Name a colour',
      'Name a fruit',
      'Answer 2 to: Name a fruit',
    ]);
    expect(shown.path).toEqual({ leafChatMessageId: again.chatMessageId, branchId: again.chatMessageId });
    const alternatives = {
      index: 1,
      count: 2,
      chatMessageIds: [second.chatMessageId, again.chatMessageId],
    };
    expect(shown.messages.slice(2).map((m) => m.alternatives)).toEqual([alternatives, alternatives]);
    expect(shown.messages[0]?.alternatives).toBeUndefined();
    expect(shown.messages[2]?.branch).toMatchObject({
      parentChatMessageId: first.chatMessageId,
      branchId: again.chatMessageId,
      alternativeOf: second.chatMessageId,
      origin: 'regenerate',
    });

    // The first answer is still there: switching to it shows it, and says it is the first of two.
    const back = await switchTo(sessionId, second.chatMessageId);
    expect(texts(back.messages)).toEqual([
      'Name a colour',
      'Answer 1 to: Name a colour',
      'Name a fruit',
      'Answer 1 to: Name a fruit',
    ]);
    expect(back.messages[3]?.alternatives).toEqual({ ...alternatives, index: 0 });
    expect(await conversation(sessionId)).toEqual(back);
    // The export follows the branch shown.
    const exported = await expectStatus<ConversationWithMessages>(
      await api(alice, `history/conversations/${sessionId}/export?format=json`),
      200,
    );
    expect(texts(exported.messages)).toEqual(texts(back.messages));
    // The list's preview follows it too.
    const list = await expectStatus<{ conversations: { sessionId: string; preview: string }[] }>(
      await api(alice, 'history/users/user_001/conversations'),
      200,
    );
    expect(list.conversations.find((c) => c.sessionId === sessionId)?.preview).toBe(
      'Answer 1 to: Name a fruit',
    );
  });

  it('branches at an edit: later prompts hold only the branch they are on, and a switch back continues the old one', async () => {
    const sessionId = await alice.startSession();
    const a = await ask(sessionId, 'My dog is Rex');
    const b = await ask(sessionId, 'My cat is Tom');
    const c = await ask(sessionId, 'My fish is Nemo');
    const edit = await ask(sessionId, 'My cat is Felix', { editOf: b.chatMessageId });
    expect(said(edit.request)).toEqual(['My dog is Rex', 'Answer 1 to: My dog is Rex', 'My cat is Felix']);
    const d = await ask(sessionId, 'What are my pets?');
    expect(said(d.request)).toEqual([
      'My dog is Rex',
      'Answer 1 to: My dog is Rex',
      'My cat is Felix',
      'Answer 1 to: My cat is Felix',
      'What are my pets?',
    ]);
    const edited = await conversation(sessionId);
    expect(texts(edited.messages).filter((_, i) => i % 2 === 0)).toEqual([
      'My dog is Rex',
      'My cat is Felix',
      'What are my pets?',
    ]);
    expect(edited.messages[2]?.alternatives).toEqual({
      index: 1,
      count: 2,
      chatMessageIds: [b.chatMessageId, edit.chatMessageId],
    });
    // The continuation stays on the edit's branch.
    expect(edited.messages[4]?.branch).toMatchObject({
      parentChatMessageId: edit.chatMessageId,
      branchId: edit.chatMessageId,
    });

    // Back to the first branch, as it was last continued (through the fish), and on from there.
    const old = await switchTo(sessionId, b.chatMessageId);
    expect(old.path?.leafChatMessageId).toBe(c.chatMessageId);
    expect(texts(old.messages).filter((_, i) => i % 2 === 0)).toEqual([
      'My dog is Rex',
      'My cat is Tom',
      'My fish is Nemo',
    ]);
    const e = await ask(sessionId, 'And my pets now?');
    expect(said(e.request)).toEqual([
      'My dog is Rex',
      'Answer 1 to: My dog is Rex',
      'My cat is Tom',
      'Answer 1 to: My cat is Tom',
      'My fish is Nemo',
      'Answer 1 to: My fish is Nemo',
      'And my pets now?',
    ]);
    // Its path skips the other branch's turns, committed between its parent and it.
    const continued = await conversation(sessionId);
    expect(continued.messages.at(-1)?.branch).toEqual({
      parentChatMessageId: c.chatMessageId,
      branchId: 'main',
      gaps: [{ from: 6, to: 10 }],
    });
    expect(texts(continued.messages)).toHaveLength(8);

    // The hot copy expires: the conversation resumes on the branch it showed, from long-term history.
    await withRuntimeHotStore(runtime, (hot) => hot.deleteSession(sessionId));
    const f = await ask(sessionId, 'Which fish?');
    expect(said(f.request).slice(0, 2)).toEqual(['My dog is Rex', 'Answer 1 to: My dog is Rex']);
    expect(said(f.request)).not.toContain('My cat is Felix');
    expect(said(f.request)).toContain('And my pets now?');

    // Every committed message, as long-term history stored it, carries its turn's branch.
    const stored = await runtime.clients.database
      .container('conversation-messages')
      .items.query<ConversationMessage>({
        query: "SELECT * FROM c WHERE c.sessionId = @s AND c.kind = 'message'",
        parameters: [{ name: '@s', value: sessionId }],
      })
      .fetchAll();
    expect(stored.resources).toHaveLength(14);
    expect(stored.resources.every((m) => m.branch !== undefined)).toBe(true);
    expect(a.events[0]).toMatchObject({ type: 'message-start' });
  });

  it('refuses to replace a turn still being answered (409), an unknown one (404), and another user (404)', async () => {
    const sessionId = await alice.startSession();
    const done = await ask(sessionId, 'Hello there');
    let release!: () => void;
    hold = new Promise((resolve) => (release = resolve));
    const running = randomUUID();
    try {
      await expectStatus(
        await alice.post({ sessionId, chatMessageId: running, text: 'Take your time' }),
        202,
      );
      const early = await api(alice, `chat/${sessionId}/${running}/regenerate`, {
        method: 'POST',
        body: JSON.stringify({ chatMessageId: randomUUID() }),
      });
      // Queued behind nothing: the turn may be running or still queued; either way it has no answer yet.
      expect(early.status).toBe(409);
      expect(early.headers.get('content-type')).toBe('application/problem+json');
      expect(early.headers.get('retry-after')).toMatch(/^\d+$/);
    } finally {
      release();
      hold = undefined;
    }
    await live.waitForTerminal(running);

    const unknown = randomUUID();
    for (const reply of [
      await api(alice, `chat/${sessionId}/${unknown}/regenerate`, {
        method: 'POST',
        body: JSON.stringify({ chatMessageId: randomUUID() }),
      }),
      await alice.post({ sessionId, chatMessageId: randomUUID(), text: 'x', editOf: unknown }),
      await api(alice, `history/conversations/${sessionId}/branch`, {
        method: 'PUT',
        body: JSON.stringify({ chatMessageId: unknown }),
      }),
    ]) {
      expect(reply.status).toBe(404);
      expect(reply.headers.get('content-type')).toBe('application/problem+json');
    }

    // Bob reaches nothing of Alice's conversation, and learns nothing either: the answers an unknown id gets.
    for (const reply of [
      await api(bob, `chat/${sessionId}/${done.chatMessageId}/regenerate`, {
        method: 'POST',
        body: JSON.stringify({ chatMessageId: randomUUID() }),
      }),
      await bob.post({
        sessionId,
        chatMessageId: randomUUID(),
        text: 'mine now',
        editOf: done.chatMessageId,
      }),
      await api(bob, `history/conversations/${sessionId}/branch`, {
        method: 'PUT',
        body: JSON.stringify({ chatMessageId: done.chatMessageId }),
      }),
    ]) {
      expect(reply.status).toBe(404);
      expect(reply.headers.get('content-type')).toBe('application/problem+json');
    }
    const regenerateAsBob = await api(bob, `chat/${sessionId}/${done.chatMessageId}/regenerate`, {
      method: 'POST',
      body: JSON.stringify({ chatMessageId: randomUUID(), userId: 'user_001' }),
    });
    expect(regenerateAsBob.status).toBe(403);
    // Nothing of it changed Alice's conversation.
    expect(texts((await conversation(sessionId)).messages)).toEqual([
      'Hello there',
      'Answer 1 to: Hello there',
      'Take your time',
      'Answer 1 to: Take your time',
    ]);
  });

  it('answers bad ids and bodies with problem+json 400', async () => {
    const sessionId = await alice.startSession();
    const done = await ask(sessionId, 'Bad ids next');
    const bad = [
      await api(alice, `chat/not-a-session/${done.chatMessageId}/regenerate`, {
        method: 'POST',
        body: JSON.stringify({ chatMessageId: randomUUID() }),
      }),
      await api(alice, `chat/${sessionId}/not-a-message/regenerate`, {
        method: 'POST',
        body: JSON.stringify({ chatMessageId: randomUUID() }),
      }),
      await api(alice, `chat/${sessionId}/${done.chatMessageId}/regenerate`, {
        method: 'POST',
        body: JSON.stringify({ chatMessageId: 'nope' }),
      }),
      await api(alice, `chat/${sessionId}/${done.chatMessageId}/regenerate`, {
        method: 'POST',
        body: JSON.stringify({ chatMessageId: done.chatMessageId }),
      }),
      await alice.post({ sessionId, chatMessageId: randomUUID(), text: 'x', editOf: 'nope' }),
      await api(alice, `history/conversations/${sessionId}/branch`, {
        method: 'PUT',
        body: JSON.stringify({ chatMessageId: 'nope' }),
      }),
      await api(alice, `history/conversations/${sessionId}/branch`, { method: 'PUT', body: '[]' }),
    ];
    for (const reply of bad) {
      expect(reply.status, await reply.clone().text()).toBe(400);
      expect(reply.headers.get('content-type')).toBe('application/problem+json');
    }
  });
});
