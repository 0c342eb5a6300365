// Rebuilding working memory from long-term history: the same window as over the whole conversation, read from
// the end a page at a time and only as far as the window reaches, whatever the conversation's length.
import { describe, expect, it } from 'vitest';
import {
  MemoryConversationHeaders,
  MemoryConversationMessages,
} from '../../test/support/in-memory-history.js';
import type { StoredMessage } from '../history/contracts.js';
import type { MessagePageOptions } from '../history/conversation-messages.js';
import { ForbiddenError } from '../errors.js';
import type { ConversationMessage } from '../conversation/messages.js';
import { fitHotWindow } from '../conversation/hot-window.js';
import { rebuildWorkingMemory } from './working-memory-rebuild.js';

const USER = 'user-1';
const SESSION = 'session-1';

/** Long-term history that counts the pages and prompt reads it was asked for. */
class CountingMessages extends MemoryConversationMessages {
  readonly pages: MessagePageOptions[] = [];
  promptReads = 0;
  override page(userId: string, sessionId: string, options: MessagePageOptions) {
    this.pages.push(options);
    return super.page(userId, sessionId, options);
  }
  override getSystemPrompt(userId: string, sessionId: string) {
    this.promptReads += 1;
    return super.getSystemPrompt(userId, sessionId);
  }
}

function conversation(turns: number, text = 'x'.repeat(40)): ConversationMessage[] {
  return Array.from({ length: turns }, (_, i): ConversationMessage[] => {
    const timestamp = new Date(Date.UTC(2025, 0, 1, 0, 0, i)).toISOString();
    return [
      { messageId: `t${i}_user`, chatMessageId: `t${i}`, role: 'user', content: `${i} ${text}`, timestamp },
      {
        messageId: `t${i}_assistant`,
        chatMessageId: `t${i}`,
        role: 'assistant',
        content: `reply ${i} ${text}`,
        timestamp,
        finishReason: 'stop',
      },
    ];
  })
    .flat()
    .map((message, ordinal) => ({ ...message, ordinal }));
}

async function history(messages: readonly ConversationMessage[], persisted = messages.length) {
  const headers = new MemoryConversationHeaders();
  const items = new CountingMessages();
  await headers.touch({
    userId: USER,
    sessionId: SESSION,
    createdAt: '2025-01-01T00:00:00.000Z',
    lastActivity: messages.at(-1)?.timestamp ?? '2025-01-01T00:00:00.000Z',
    messageCount: messages.length,
    preview: '',
    firstUserText: 'hello',
  });
  const stored = messages.slice(0, persisted).map((message): StoredMessage => ({
    ...message,
    ordinal: message.ordinal ?? 0,
    id: message.messageId,
    kind: 'message',
    userId: USER,
    sessionId: SESSION,
  }));
  await items.put(stored);
  await headers.recordPersisted(USER, SESSION, {
    upTo: persisted,
    at: 'now',
    tokens: { prompt: 0, completion: 0, total: 0 },
    textTokens: 0,
  });
  return { headers, messages: items };
}

const bytes = (messages: readonly ConversationMessage[]) =>
  messages.reduce((sum, m) => sum + Buffer.byteLength(JSON.stringify(m)), 0);

describe('rebuildWorkingMemory', () => {
  it('gives a conversation without a header as new, with no digest, reading nothing more', async () => {
    const ports = { headers: new MemoryConversationHeaders(), messages: new CountingMessages() };
    expect(await rebuildWorkingMemory(ports, USER, SESSION, 10_000)).toEqual({
      sessionId: SESSION,
      userId: USER,
      messages: [],
      messageCount: 0,
      digestRevision: 0,
    });
    expect(ports.messages.pages).toEqual([]);
    expect(ports.messages.promptReads).toBe(0);
  });

  it('gives the whole of a short conversation, with its count and start', async () => {
    const all = conversation(3);
    const ports = await history(all);
    expect(await rebuildWorkingMemory(ports, USER, SESSION, 100_000)).toEqual({
      sessionId: SESSION,
      userId: USER,
      messages: all,
      messageCount: 6,
      createdAt: '2025-01-01T00:00:00.000Z',
    });
    expect(ports.messages.pages).toHaveLength(1);
  });

  it.each([7, 10, 50])(
    'gives the same window as over the whole conversation, reading pages of %i from the end',
    async (pageSize) => {
      const all = conversation(300);
      const window = bytes(all.slice(-41)) + 10; // 20 whole turns and part of one more
      const ports = await history(all);
      const rebuilt = await rebuildWorkingMemory(ports, USER, SESSION, window, pageSize);
      expect(rebuilt.messages).toEqual(fitHotWindow(all, window));
      expect(rebuilt.messages).toHaveLength(40);
      expect(rebuilt.messageCount).toBe(600);
      // Pages back to just past the window, not to the start of the conversation.
      expect(ports.messages.pages.length).toBeLessThanOrEqual(Math.ceil(44 / pageSize) + 1);
      expect(ports.messages.pages[0]).toEqual({ order: 'desc', limit: pageSize });
    },
  );

  it('reads the same number of pages at 100 turns and at 2,000', async () => {
    const counts: number[] = [];
    for (const turns of [100, 2_000]) {
      const ports = await history(conversation(turns));
      await rebuildWorkingMemory(ports, USER, SESSION, 5_000);
      counts.push(ports.messages.pages.length);
    }
    expect(counts[1]).toBe(counts[0]);
  });

  it('counts on from the header when the newest messages are not stored yet', async () => {
    const all = conversation(5);
    const ports = await history(all, 6);
    const rebuilt = await rebuildWorkingMemory(ports, USER, SESSION, 100_000);
    expect(rebuilt.messages).toEqual(all.slice(0, 6));
    expect(rebuilt.messageCount).toBe(10);
  });

  it('gives back the system prompt the conversation began with, read beside its pages', async () => {
    const all = conversation(3);
    const ports = await history(all);
    const prompt = { content: 'You are helpful.', personalised: true, createdAt: '2025-01-01T00:00:00.000Z' };
    await ports.messages.putSystemPrompt(USER, SESSION, prompt);
    // The prompt's read starts before the first page is answered: no extra round trip.
    const order: string[] = [];
    const page = ports.messages.page.bind(ports.messages);
    const getPrompt = ports.messages.getSystemPrompt.bind(ports.messages);
    ports.messages.page = (...args) => {
      order.push('page');
      return page(...args);
    };
    ports.messages.getSystemPrompt = (...args) => {
      order.push('prompt');
      return getPrompt(...args);
    };
    const rebuilt = await rebuildWorkingMemory(ports, USER, SESSION, 100_000);
    expect(rebuilt.systemPrompt).toEqual(prompt);
    expect(rebuilt.messages).toEqual(all);
    expect(order).toEqual(['prompt', 'page']);
  });

  it('reads no page while the history worker has stored nothing', async () => {
    const ports = await history(conversation(2), 0);
    const rebuilt = await rebuildWorkingMemory(ports, USER, SESSION, 100_000);
    expect(rebuilt).toMatchObject({ messages: [], messageCount: 4 });
    expect(ports.messages.pages).toEqual([]);
  });

  it("refuses a header of another user's conversation", async () => {
    const ports = await history(conversation(1));
    const foreign = { ...ports, headers: { get: () => ports.headers.get(USER, SESSION) } };
    await expect(rebuildWorkingMemory(foreign, 'intruder', SESSION, 10_000)).rejects.toBeInstanceOf(
      ForbiddenError,
    );
  });
});
