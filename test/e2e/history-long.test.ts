// A conversation of 10,000 messages through the History API over the local runtime: listed, read page by page
// to the end in both directions, exported whole, continued with a new turn (working memory rebuilt from the
// newest items only), and deleted without a trace.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalRuntime } from '../../local/runtime.js';
import { createHistoryStores } from '../../shared/history/adapters/history-adapters.js';
import type {
  ConversationPage,
  ConversationWithMessages,
  StoredMessage,
} from '../../shared/history/contracts.js';
import { itemsOf, tombstoneOf } from '../support/conversation-items.js';
import { ChatClient, expectStatus, type RealtimeListener } from '../support/chat-client.js';
import { startTestRuntime } from '../support/local-runtime.js';

const MESSAGES = 10_000;
const USER = 'user_003';

describe('a conversation of 10,000 messages', () => {
  let runtime: LocalRuntime;
  let client: ChatClient;
  let live: RealtimeListener;
  let sessionId: string;

  beforeAll(async () => {
    runtime = await startTestRuntime();
    client = new ChatClient(runtime.url, USER);
    live = await client.listen();
    sessionId = await client.startSession();
    const stores = createHistoryStores(runtime.clients.database, { fullText: 'in-process' });
    const start = Date.parse('2026-01-01T00:00:00.000Z');
    const messages: StoredMessage[] = Array.from({ length: MESSAGES }, (_, ordinal) => {
      const turn = Math.floor(ordinal / 2);
      const chatMessageId = `00000000-0000-4000-8000-${String(turn).padStart(12, '0')}`;
      const role = ordinal % 2 === 0 ? ('user' as const) : ('assistant' as const);
      return {
        id: `${chatMessageId}_${role}`,
        kind: 'message',
        userId: USER,
        sessionId,
        ordinal,
        messageId: `${chatMessageId}_${role}`,
        chatMessageId,
        role,
        content: role === 'user' ? `Question number ${turn}` : `Answer number ${turn}`,
        timestamp: new Date(start + ordinal * 1000).toISOString(),
      };
    });
    const last = messages.at(-1)!;
    await stores.headers.touch({
      userId: USER,
      sessionId,
      createdAt: messages[0]!.timestamp,
      lastActivity: last.timestamp,
      messageCount: MESSAGES,
      preview: last.content,
      firstUserText: messages[0]!.content,
    });
    for (let from = 0; from < MESSAGES; from += 500)
      await stores.messages.put(messages.slice(from, from + 500));
    await stores.headers.recordPersisted(USER, sessionId, {
      upTo: MESSAGES,
      at: last.timestamp,
      tokens: { prompt: 0, completion: 0, total: 0 },
      textTokens: 0,
    });
  }, 300_000);
  afterAll(async () => {
    live?.stop();
    await runtime?.stop();
  });

  const call = (path: string, init: RequestInit = {}) =>
    fetch(`${runtime.url}/api/${path}`, { ...init, headers: client.headers() });

  it('is listed with its count', async () => {
    const page = await expectStatus<ConversationPage>(await call(`history/users/${USER}/conversations`), 200);
    expect(page.conversations[0]).toMatchObject({
      sessionId,
      messageCount: MESSAGES,
      title: 'Question number 0',
    });
  });

  it('reads page by page to the end, oldest first and newest first', async () => {
    for (const order of ['asc', 'desc'] as const) {
      const ordinals: number[] = [];
      let token: string | undefined;
      let pages = 0;
      do {
        const query = `limit=500&order=${order}${token ? `&continuationToken=${encodeURIComponent(token)}` : ''}`;
        const page = await expectStatus<ConversationWithMessages>(
          await call(`history/conversations/${sessionId}?${query}`),
          200,
        );
        ordinals.push(...page.messages.map((m) => m.ordinal));
        token = page.continuationToken;
        pages += 1;
      } while (token !== undefined);
      const expected = Array.from({ length: MESSAGES }, (_, i) => i);
      expect(ordinals).toEqual(order === 'asc' ? expected : expected.reverse());
      expect(pages).toBe(MESSAGES / 500);
    }
  }, 240_000);

  it('exports whole', async () => {
    const json = await expectStatus<ConversationWithMessages>(
      await call(`history/conversations/${sessionId}/export?format=json`),
      200,
    );
    expect(json.messages).toHaveLength(MESSAGES);
    expect(json.messages.at(-1)?.content).toBe(`Answer number ${MESSAGES / 2 - 1}`);
    const markdown = await (await call(`history/conversations/${sessionId}/export?format=markdown`)).text();
    expect(markdown).toContain('Question number 0');
    expect(markdown).toContain(`Answer number ${MESSAGES / 2 - 1}`);
  }, 240_000);

  it('goes on with a new turn, working memory rebuilt from the newest messages only', async () => {
    const id = await client.send(sessionId, 'What was question number 4999?');
    const events = await live.waitForTerminal(id);
    expect(events.at(-1)?.type).toBe('message-end');
    const memory = await runtime.app.chat.turn.workingMemory.load(USER, sessionId);
    expect(memory.messageCount).toBe(MESSAGES + 2);
    expect(memory.messages.at(-1)?.ordinal).toBe(MESSAGES + 1);
    expect(memory.messages.length).toBeLessThan(2_000);
  }, 240_000);

  it('is deleted without a trace', async () => {
    const response = await call(`history/conversations/${sessionId}`, { method: 'DELETE' });
    expect(response.status).toBe(204);
    // Nothing names the session any more but its tombstone, kept so no late writer can bring it back.
    expect(await itemsOf(runtime, sessionId)).toEqual([]);
    expect(await tombstoneOf(runtime, sessionId)).toBeDefined();
    const page = await expectStatus<ConversationPage>(await call(`history/users/${USER}/conversations`), 200);
    expect(page.conversations.map((c) => c.sessionId)).not.toContain(sessionId);
  }, 300_000);
});
