// The past-conversation tools over history's in-memory ports: an earlier exchange whole by its id (from
// long-term history, or from working memory before the history worker stored it), exchanges by topic, and that
// neither reaches outside the calling turn's own user and session, nor off its branch path.
import { beforeEach, describe, expect, it } from 'vitest';
import { MemoryConversationMessages, MemorySessionMemory } from '../../test/support/in-memory-history.js';
import { MemoryWorkingMemory } from '../../test/support/in-memory-ports.js';
import type { ConversationMessage } from '../conversation/messages.js';
import type { ExchangeEntry } from '../history/contracts.js';
import { createChatTools } from './index.js';
import type { ToolContext } from './tool-registry.js';

const mine: ToolContext = { userId: 'user-1', sessionId: 'session-1', chatMessageId: 'now' };

let messages: MemoryConversationMessages;
let sessionMemory: MemorySessionMemory;
let workingMemory: MemoryWorkingMemory;

function exchange(
  chatMessageId: string,
  question: string,
  answer: string,
  at: string,
): ConversationMessage[] {
  return [
    { messageId: `${chatMessageId}_user`, chatMessageId, role: 'user', content: question, timestamp: at },
    {
      messageId: `${chatMessageId}_assistant`,
      chatMessageId,
      role: 'assistant',
      content: answer,
      timestamp: at,
      finishReason: 'stop',
    },
  ];
}

async function persist(context: ToolContext, conversation: ConversationMessage[]) {
  await messages.put(
    conversation.map((message, ordinal) => ({
      ...message,
      ordinal,
      id: message.messageId,
      kind: 'message' as const,
      userId: context.userId,
      sessionId: context.sessionId,
    })),
  );
}

/** Other conversations and the knowledge base are not this file's concern. */
const searchConversations = () => Promise.resolve([]);
const searchKnowledge = () => Promise.resolve([]);

/** An exchange's id is its turn's, a UUID: one made from a readable label. */
const X = (label: string): string =>
  `00000000-0000-4000-8000-${Buffer.from(label).toString('hex').padStart(12, '0').slice(-12)}`;

function entry(exchangeId: string, ordinal: number, line: string, tags: string[]): ExchangeEntry {
  return { exchangeId, ordinal, line, tags, at: `2025-01-01T00:00:0${ordinal}.000Z` };
}

async function call(name: string, args: unknown, context: ToolContext = mine) {
  const registry = createChatTools({
    messages,
    sessionMemory,
    workingMemory,
    searchConversations,
    searchKnowledge,
  });
  const outcome = await registry.execute({ id: 'call-1', name, arguments: JSON.stringify(args) }, context);
  return {
    isError: outcome.isError,
    value: JSON.parse(outcome.result) as Record<string, unknown>,
    ...(outcome.sources ? { sources: outcome.sources } : {}),
  };
}

beforeEach(() => {
  messages = new MemoryConversationMessages();
  sessionMemory = new MemorySessionMemory(messages);
  workingMemory = new MemoryWorkingMemory();
});

describe('retrieve_past_answer', () => {
  it('gives an earlier exchange whole: the question, the full answer and when it was given', async () => {
    const long = 'The long answer. '.repeat(200);
    await persist(mine, [
      ...exchange(X('e1'), 'What is GDPR?', long, '2025-01-01T00:00:01.000Z'),
      ...exchange(X('e2'), 'And the AI Act?', 'Another answer.', '2025-01-01T00:00:02.000Z'),
    ]);
    expect(await call('retrieve_past_answer', { exchangeId: X('e1') })).toEqual({
      isError: false,
      value: { exchangeId: X('e1'), at: '2025-01-01T00:00:01.000Z', question: 'What is GDPR?', answer: long },
    });
  });

  it('gives the sources the earlier answer cited, by citation and excerpt, and makes them sources of this turn', async () => {
    const [question, answer] = exchange(
      X('e1'),
      'How long is parental leave?',
      'Twenty weeks [Handbook, p. 4].',
      't',
    );
    const source = {
      chunkId: 'doc:4',
      documentId: 'a'.repeat(32),
      title: 'Handbook',
      pages: [4],
      citation: 'Handbook, p. 4',
      excerpt: 'Parents get twenty weeks of paid leave.',
      score: 0.03,
    };
    await persist(mine, [question!, { ...answer!, sources: [source] }]);
    expect((await call('retrieve_past_answer', { exchangeId: X('e1') })).value).toEqual({
      exchangeId: X('e1'),
      at: 't',
      question: 'How long is parental leave?',
      answer: 'Twenty weeks [Handbook, p. 4].',
      sources: [{ citation: 'Handbook, p. 4', excerpt: 'Parents get twenty weeks of paid leave.' }],
    });
    // A new answer that repeats them cites them too: the turn keeps them as its own.
    expect((await call('retrieve_past_answer', { exchangeId: X('e1') })).sources).toEqual([source]);
    await persist(mine, exchange(X('e2'), 'Anything else?', 'No.', 't'));
    expect(await call('retrieve_past_answer', { exchangeId: X('e2') })).not.toHaveProperty('sources');
  });

  it('finds an exchange in working memory before the history worker stored it', async () => {
    await workingMemory.append(
      mine.userId,
      mine.sessionId,
      exchange(X('fresh'), 'Just asked', 'Just answered', '2025-01-02T00:00:00.000Z'),
    );
    expect((await call('retrieve_past_answer', { exchangeId: X('fresh') })).value).toMatchObject({
      question: 'Just asked',
      answer: 'Just answered',
    });
  });

  it('says so, in a result the model can read, when the conversation has no such exchange', async () => {
    const outcome = await call('retrieve_past_answer', { exchangeId: X('nope') });
    expect(outcome.isError).toBe(true);
    expect(outcome.value.error).toMatch(new RegExp(`no exchange "${X('nope')}".*lookup_past_conversation`));
  });

  it("never reaches another session's or another user's exchange, even by its id", async () => {
    await persist({ ...mine, sessionId: 'session-2' }, exchange(X('other-session'), 'q', 'secret a', 't'));
    await persist({ ...mine, userId: 'user-2' }, exchange(X('other-user'), 'q', 'secret b', 't'));
    for (const exchangeId of [X('other-session'), X('other-user')]) {
      const outcome = await call('retrieve_past_answer', { exchangeId });
      expect(outcome.isError).toBe(true);
      expect(JSON.stringify(outcome.value)).not.toContain('secret');
    }
  });

  it('tells a failed turn from an answer', async () => {
    const [question] = exchange(X('failed'), 'Will this work?', '', 't');
    await persist(mine, [{ ...question!, failure: { code: 'llm_unavailable', message: 'No model.' } }]);
    expect((await call('retrieve_past_answer', { exchangeId: X('failed') })).value.answer).toBe(
      '(This turn failed: No model.)',
    );
  });

  it('refuses an empty id, and any id that is not a turn id (dot segments, separators)', async () => {
    for (const exchangeId of ['', '.', '..', '%2e%2e', 'a/b', 'a\\b', 'e1']) {
      const outcome = await call('retrieve_past_answer', { exchangeId });
      expect(outcome.isError, exchangeId).toBe(true);
      // Refused by the id's format before any read, not looked up and found missing.
      expect(outcome.value.error, exchangeId).toMatch(/must be a UUID/);
    }
  });
});

describe('lookup_past_conversation', () => {
  it('gives up to five entries about the topic, newest first, with their ids', async () => {
    for (let i = 0; i < 7; i++)
      await sessionMemory.putExchange(
        mine.userId,
        mine.sessionId,
        entry(`g${i}`, i, `GDPR point ${i}`, ['gdpr']),
      );
    await sessionMemory.putExchange(mine.userId, mine.sessionId, entry('w', 9, 'The weather', ['weather']));
    const { isError, value } = await call('lookup_past_conversation', { topic: 'GDPR' });
    expect(isError).toBe(false);
    expect(value.topic).toBe('GDPR');
    expect(value.exchanges).toEqual(
      [6, 5, 4, 3, 2].map((i) => ({
        exchangeId: `g${i}`,
        line: `GDPR point ${i}`,
        tags: ['gdpr'],
        at: `2025-01-01T00:00:0${i}.000Z`,
      })),
    );
  });

  it("says when nothing is found, and never looks into another session's index", async () => {
    await sessionMemory.putExchange('user-1', 'session-2', entry('x', 0, 'GDPR elsewhere', ['gdpr']));
    await sessionMemory.putExchange('user-2', 'session-1', entry('y', 0, 'GDPR of another user', ['gdpr']));
    const { value } = await call('lookup_past_conversation', { topic: 'gdpr' });
    expect(value.exchanges).toEqual([]);
    expect(value.note).toMatch(/No earlier exchange/);
  });

  it('is described to the model beside retrieve_past_answer', () => {
    const specs = createChatTools({
      messages,
      sessionMemory,
      workingMemory,
      searchConversations,
      searchKnowledge,
    }).specs();
    expect(specs.map((spec) => spec.name)).toEqual([
      'add_numbers',
      'retrieve_past_answer',
      'lookup_past_conversation',
      'search_conversation_history',
      'search_knowledge_base',
    ]);
    expect(specs[2]?.parameters).toMatchObject({ required: ['topic'] });
  });
});

describe('on a branch', () => {
  // Turns a (0, 1) and b (2, 3); c (4, 5) edits b: its path leaves out 2 and 3.
  const onEdit: ToolContext = { ...mine, branch: { gaps: [{ from: 2, to: 4 }] } };

  beforeEach(async () => {
    await persist(mine, [
      ...exchange(X('a'), 'GDPR basics?', 'Answer a.', '2025-01-01T00:00:00.000Z'),
      ...exchange(X('b'), 'GDPR fines?', 'Answer b.', '2025-01-01T00:00:01.000Z'),
      ...exchange(X('c'), 'GDPR for schools?', 'Answer c.', '2025-01-01T00:00:02.000Z'),
    ]);
    for (const [id, ordinal] of [
      [X('a'), 0],
      [X('b'), 2],
      [X('c'), 4],
    ] as const)
      await sessionMemory.putExchange(
        mine.userId,
        mine.sessionId,
        entry(id, ordinal, `GDPR ${id}`, ['gdpr']),
      );
  });

  it('finds the exchanges of the turn’s path only', async () => {
    const { value } = await call('lookup_past_conversation', { topic: 'gdpr' }, onEdit);
    expect((value.exchanges as { exchangeId: string }[]).map((e) => e.exchangeId)).toEqual([X('c'), X('a')]);
    const all = await call('lookup_past_conversation', { topic: 'gdpr' });
    expect((all.value.exchanges as { exchangeId: string }[]).map((e) => e.exchangeId)).toEqual([
      X('c'),
      X('b'),
      X('a'),
    ]);
  });

  it('will not give an exchange of another branch, and says why', async () => {
    const refused = await call('retrieve_past_answer', { exchangeId: X('b') }, onEdit);
    expect(refused.isError).toBe(true);
    expect(JSON.stringify(refused.value)).toMatch(/on another branch of this conversation/);
    expect((await call('retrieve_past_answer', { exchangeId: X('a') }, onEdit)).value).toMatchObject({
      answer: 'Answer a.',
    });
  });
});
