// Conversation history end to end over the local runtime, driven as a client drives it: the History API checked
// against exactly what was said, the worker's idempotency and dead-lettering, read-your-writes, resume after the
// hot copy expired, and another user refused everywhere.
import { randomUUID } from 'node:crypto';
import type { InvocationContext } from '@azure/functions';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FunctionDefinition } from '../../functions/definition.js';
import { functionDefinitions } from '../../functions/table.js';
import type { LocalRuntime } from '../../local/runtime.js';
import { completedMessageId, MESSAGE_COMPLETED_TOPIC } from '../../shared/conversation/message-completed.js';
import { HOT_CONVERSATIONS_CONTAINER } from '../../shared/chat/contracts/documents.js';
import {
  CONVERSATION_MESSAGES_CONTAINER,
  HISTORY_SUBSCRIPTION,
  type ConversationPage,
  type ConversationWithMessages,
  type HistoryStats,
} from '../../shared/history/contracts.js';
import { ChatClient, expectStatus, type RealtimeListener } from '../support/chat-client.js';
import { itemsOf, tombstoneOf } from '../support/conversation-items.js';
import { settle, startTestRuntime } from '../support/local-runtime.js';
import { messageCompleted } from '../support/message-completed.js';

const history = { subscriptionName: HISTORY_SUBSCRIPTION, topicName: MESSAGE_COMPLETED_TOPIC };

/** An HTTP call as the caller, answered as JSON (or the raw response for non-JSON answers). */
function api(runtime: LocalRuntime, client: ChatClient) {
  return (path: string, init: RequestInit = {}) =>
    fetch(`${runtime.url}/api/${path}`, {
      ...init,
      headers: client.headers({ 'content-type': 'application/json', ...(init.headers as object) }),
    });
}

async function turn(client: ChatClient, live: RealtimeListener, sessionId: string, text: string) {
  const id = await client.send(sessionId, text);
  const events = await live.waitForTerminal(id);
  expect(events.at(-1)?.type).toBe('message-end');
  return id;
}

describe('conversation history with the offline model', () => {
  let runtime: LocalRuntime;
  let alice: ChatClient;
  let bob: ChatClient;
  let aliceLive: RealtimeListener;
  /** While set, the history worker waits for it before persisting: the worker "has not run yet". */
  let gate: Promise<void> | undefined;

  beforeAll(async () => {
    const functions: FunctionDefinition[] = functionDefinitions.map((definition) =>
      definition.kind === 'serviceBus' && definition.name === 'historyWorker'
        ? {
            ...definition,
            handler: async (message: unknown, context: InvocationContext) => {
              await gate;
              await definition.handler(message, context);
            },
          }
        : definition,
    );
    runtime = await startTestRuntime({ functions });
    alice = new ChatClient(runtime.url, 'user_001');
    bob = new ChatClient(runtime.url, 'user_002');
    aliceLive = await alice.listen();
  });
  afterAll(async () => {
    aliceLive?.stop();
    await runtime?.stop();
  });

  it('lists, gets, renames, exports and deletes a conversation with exactly what was said', async () => {
    const call = api(runtime, alice);
    const sessionId = await alice.startSession();
    const texts = ['Plan a trip to Lisbon in May', 'What should I pack?', 'reply with 12 words'];
    const ids: string[] = [];
    for (const text of texts) ids.push(await turn(alice, aliceLive, sessionId, text));
    await settle(runtime);

    const memory = await runtime.app.chat.turn.workingMemory.load('user_001', sessionId);
    const answers = ids.map(
      (id) => memory.messages.find((m) => m.chatMessageId === id && m.role === 'assistant')?.content,
    );
    expect(answers.every((answer) => typeof answer === 'string' && answer.length > 0)).toBe(true);

    const list = await expectStatus<ConversationPage>(
      await call(`history/users/user_001/conversations?limit=50`),
      200,
    );
    const listed = list.conversations.find((c) => c.sessionId === sessionId);
    expect(listed).toMatchObject({
      sessionId,
      messageCount: 6,
      visibleMessageCount: 6,
      titleSource: expect.any(String),
    });
    expect(answers[2]!.startsWith(listed!.preview.replace(/…$/, ''))).toBe(true);
    expect(listed?.title.length).toBeGreaterThan(0);

    const conversation = await expectStatus<ConversationWithMessages>(
      await call(`history/conversations/${sessionId}`),
      200,
    );
    expect(conversation.messages.map((m) => [m.ordinal, m.role, m.content])).toEqual(
      texts.flatMap((text, i) => [
        [2 * i, 'user', text],
        [2 * i + 1, 'assistant', answers[i]],
      ]),
    );

    const renamed = await expectStatus<{ title: string; titleSource: string }>(
      await call(`history/conversations/${sessionId}/title`, {
        method: 'PUT',
        body: JSON.stringify({ title: '  Lisbon in May  ' }),
      }),
      200,
    );
    expect(renamed).toMatchObject({ title: 'Lisbon in May', titleSource: 'user' });
    // Later turns (and any model title they bring) leave the user's title alone.
    await turn(alice, aliceLive, sessionId, 'One more question about trams in Lisbon');
    await settle(runtime);
    const after = await expectStatus<ConversationWithMessages>(
      await call(`history/conversations/${sessionId}?limit=2&order=desc`),
      200,
    );
    expect(after).toMatchObject({ title: 'Lisbon in May', titleSource: 'user', messageCount: 8 });
    expect(after.messages.map((m) => m.ordinal)).toEqual([7, 6]);

    const markdown = await call(`history/conversations/${sessionId}/export?format=markdown`);
    expect(markdown.status).toBe(200);
    expect(markdown.headers.get('content-type')).toMatch(/^text\/markdown/);
    expect(markdown.headers.get('content-disposition')).toMatch(/^attachment; filename=/);
    const text = await markdown.text();
    expect(text).toContain('Lisbon in May');
    for (const said of [...texts, ...answers]) expect(text).toContain(said);

    const json = await expectStatus<ConversationWithMessages>(
      await call(`history/conversations/${sessionId}/export?format=json`),
      200,
    );
    expect(json.messages.map((m) => m.content)).toEqual([
      ...texts.flatMap((said, i) => [said, answers[i]]),
      'One more question about trams in Lisbon',
      expect.any(String),
    ]);

    const stats = await expectStatus<HistoryStats>(await call('history/users/user_001/stats'), 200);
    expect(stats.conversations).toBeGreaterThanOrEqual(1);
    expect(stats.messages).toBeGreaterThanOrEqual(8);

    expect((await itemsOf(runtime, sessionId)).length).toBeGreaterThan(0);
    expect((await call(`history/conversations/${sessionId}`, { method: 'DELETE' })).status).toBe(204);
    expect(await itemsOf(runtime, sessionId)).toEqual([]);
    expect(await tombstoneOf(runtime, sessionId)).toMatchObject({ deletedAt: expect.any(String) });
    for (const id of ids) expect(await runtime.durable.getStatus(`chat-${sessionId}-${id}`)).toBeUndefined();
    expect((await call(`history/conversations/${sessionId}`)).status).toBe(404);
    const posted = await alice.post({ sessionId, chatMessageId: randomUUID(), text: 'still there?' });
    expect(posted.status).toBe(404);
    expect((await call(`history/conversations/${sessionId}`, { method: 'DELETE' })).status).toBe(404);
  });

  it('shows a turn right after message-end, before the history worker has run', async () => {
    const call = api(runtime, alice);
    let release!: () => void;
    gate = new Promise((resolve) => (release = resolve));
    try {
      const sessionId = await alice.startSession();
      const id = await turn(alice, aliceLive, sessionId, 'Remember that my cat is called Miso');
      const list = await expectStatus<ConversationPage>(
        await call('history/users/user_001/conversations'),
        200,
      );
      expect(list.conversations[0]).toMatchObject({
        sessionId,
        messageCount: 2,
        title: 'Remember that my cat is called Miso',
      });
      const conversation = await expectStatus<ConversationWithMessages>(
        await call(`history/conversations/${sessionId}`),
        200,
      );
      expect(conversation.messages.map((m) => [m.chatMessageId, m.role])).toEqual([
        [id, 'user'],
        [id, 'assistant'],
      ]);
      const { resources } = await runtime.clients.database
        .container(CONVERSATION_MESSAGES_CONTAINER)
        .items.query({
          query: 'SELECT c.id FROM c WHERE c.sessionId = @s',
          parameters: [{ name: '@s', value: sessionId }],
        })
        .fetchAll();
      expect(resources).toEqual([]);
    } finally {
      release();
      gate = undefined;
    }
    await settle(runtime);
  });

  it("keeps an answer's reasoning and a turn's use_memory false in history, stored and read back", async () => {
    const call = api(runtime, alice);
    const sessionId = await alice.startSession();
    const id = randomUUID();
    await expectStatus(
      await alice.post({
        sessionId,
        chatMessageId: id,
        text: 'Think about a name for my cat',
        use_memory: false,
      }),
      202,
    );
    const events = await aliceLive.waitForTerminal(id);
    expect(events.at(-1)?.type).toBe('message-end');
    const streamed = events.flatMap((e) => (e.type === 'reasoning-delta' ? [e.delta] : [])).join('');
    expect(streamed).not.toBe('');
    await settle(runtime);

    const conversation = await expectStatus<ConversationWithMessages>(
      await call(`history/conversations/${sessionId}`),
      200,
    );
    const [question, answer] = conversation.messages;
    expect(question).toMatchObject({ role: 'user', useMemory: false });
    expect(answer).toMatchObject({ role: 'assistant', useMemory: false, reasoning: { text: streamed } });
    expect(answer?.reasoning?.durationMs).toBeGreaterThanOrEqual(0);
    // Read from the long-term items, not only from working memory.
    const { resources } = await runtime.clients.database
      .container(CONVERSATION_MESSAGES_CONTAINER)
      .items.query({
        query: 'SELECT c.role, c.reasoning, c.useMemory FROM c WHERE c.sessionId = @s',
        parameters: [{ name: '@s', value: sessionId }],
      })
      .fetchAll();
    expect(resources).toEqual(
      expect.arrayContaining([{ role: 'assistant', reasoning: answer?.reasoning, useMemory: false }]),
    );
  });

  it('keeps one copy of each message however often message-completed is delivered, and dead-letters a poisoned one', async () => {
    const sessionId = await alice.startSession();
    const id = await turn(alice, aliceLive, sessionId, 'Count to three');
    await settle(runtime);
    const memory = await runtime.app.chat.turn.workingMemory.load('user_001', sessionId);
    const messages = memory.messages
      .filter((m) => m.chatMessageId === id)
      .map((m) => ({ ...m, ordinal: m.ordinal ?? 0 }));
    const body = messageCompleted({
      userId: 'user_001',
      sessionId,
      chatMessageId: id,
      completedAt: new Date().toISOString(),
      messages,
    });
    const call = api(runtime, alice);
    const before = await expectStatus<ConversationWithMessages>(
      await call(`history/conversations/${sessionId}`),
      200,
    );
    const statsBefore = await expectStatus<HistoryStats>(await call('history/users/user_001/stats'), 200);
    // The turn's tokens were counted (the offline model reports usage), once.
    expect(statsBefore.tokens.total).toBeGreaterThan(0);
    // Redeliveries as the broker makes them after a lost lock: new message ids, the same body.
    for (let i = 0; i < 5; i += 1)
      await runtime.serviceBus.publish(MESSAGE_COMPLETED_TOPIC, {
        messageId: `${completedMessageId(sessionId, id)}.again-${i}`,
        sessionId,
        body,
      });
    await settle(runtime);
    const { resources } = await runtime.clients.database
      .container(CONVERSATION_MESSAGES_CONTAINER)
      .items.query<{ id: string }>({
        query: "SELECT c.id FROM c WHERE c.sessionId = @s AND c.kind = 'message'",
        parameters: [{ name: '@s', value: sessionId }],
      })
      .fetchAll();
    expect(resources.map((item) => item.id).sort()).toEqual([`${id}_assistant`, `${id}_user`]);
    const after = await expectStatus<ConversationWithMessages>(
      await call(`history/conversations/${sessionId}`),
      200,
    );
    expect(after.messages).toEqual(before.messages);
    // A redelivered turn adds its tokens no second time.
    expect(await expectStatus<HistoryStats>(await call('history/users/user_001/stats'), 200)).toEqual(
      statsBefore,
    );

    await runtime.serviceBus.publish(MESSAGE_COMPLETED_TOPIC, {
      messageId: 'poisoned-completed-1',
      sessionId,
      body: { userId: 'user_001', sessionId, outcome: 'exploded' },
    });
    await settle(runtime);
    const dead = runtime.serviceBus.deadLetters(history);
    expect(dead).toEqual([
      expect.objectContaining({
        messageId: 'poisoned-completed-1',
        deadLetterReason: 'MaxDeliveryCountExceeded',
        deadLetterErrorDescription: expect.stringMatching(/message-completed/),
      }),
    ]);
  });

  it('refuses another user everywhere, even with the right ids, and bad input with 400', async () => {
    const sessionId = await alice.startSession();
    await turn(alice, aliceLive, sessionId, 'A private conversation');
    await settle(runtime);
    const asBob = api(runtime, bob);
    const unknown = randomUUID();
    for (const path of [
      `history/conversations/${sessionId}`,
      `history/conversations/${sessionId}/export?format=json`,
    ]) {
      const theirs = await asBob(path);
      const none = await asBob(path.replace(sessionId, unknown));
      expect(theirs.status).toBe(404);
      // The same answer as for an id nobody has, but for the id itself.
      expect(await theirs.text()).toBe((await none.text()).replaceAll(unknown, sessionId));
    }
    expect(
      (await asBob(`history/conversations/${sessionId}/title`, { method: 'PUT', body: '{"title":"mine"}' }))
        .status,
    ).toBe(404);
    expect((await asBob(`history/conversations/${sessionId}`, { method: 'DELETE' })).status).toBe(404);
    expect((await asBob('history/users/user_001/conversations')).status).toBe(403);
    expect((await asBob('history/users/user_001/stats')).status).toBe(403);
    const bobs = await expectStatus<ConversationPage>(
      await asBob('history/users/user_002/conversations'),
      200,
    );
    expect(bobs.conversations.map((c) => c.sessionId)).not.toContain(sessionId);

    const call = api(runtime, alice);
    for (const [path, init] of [
      ['history/users/user_001/conversations?continuationToken=not-a-token', {}],
      ['history/users/user_001/conversations?limit=0', {}],
      [`history/conversations/${sessionId}?continuationToken=eyJ2Ijo5fQ`, {}],
      [`history/conversations/${sessionId}/export?format=pdf`, {}],
      [`history/conversations/${sessionId}/title`, { method: 'PUT', body: '{"title":"   "}' }],
      [
        `history/conversations/${sessionId}/title`,
        { method: 'PUT', body: JSON.stringify({ title: 'x'.repeat(500) }) },
      ],
    ] as const) {
      const response = await call(path, init);
      expect(response.status, path).toBe(400);
      expect(response.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    }
    // Nothing changed.
    const conversation = await expectStatus<ConversationWithMessages>(
      await call(`history/conversations/${sessionId}`),
      200,
    );
    expect(conversation.title).toBe('A private conversation');
  });

  it('resumes a conversation whose hot copy expired from long-term history', async () => {
    const call = api(runtime, alice);
    const sessionId = await alice.startSession();
    await turn(alice, aliceLive, sessionId, 'My favourite colour is teal');
    await turn(alice, aliceLive, sessionId, 'And my favourite number is 7');
    await settle(runtime);
    // What the 24 h time to live does to an idle conversation.
    const hot = runtime.clients.database.container(HOT_CONVERSATIONS_CONTAINER);
    const { resources } = await hot.items
      .query<{ id: string }>('SELECT c.id FROM c', { partitionKey: sessionId })
      .fetchAll();
    for (const item of resources) await hot.item(item.id, sessionId).delete();
    await turn(alice, aliceLive, sessionId, 'What did I tell you so far?');
    await settle(runtime);
    const memory = await runtime.app.chat.turn.workingMemory.load('user_001', sessionId);
    expect(memory.messages.map((m) => [m.ordinal, m.role])).toEqual([
      [0, 'user'],
      [1, 'assistant'],
      [2, 'user'],
      [3, 'assistant'],
      [4, 'user'],
      [5, 'assistant'],
    ]);
    const conversation = await expectStatus<ConversationWithMessages>(
      await call(`history/conversations/${sessionId}`),
      200,
    );
    expect(conversation.messageCount).toBe(6);
    expect(conversation.messages[0]?.content).toBe('My favourite colour is teal');
  });
});
