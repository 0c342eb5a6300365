// The history worker's use-case over the in-memory history ports and a recording model: a turn is stored once
// however often its event is delivered, failed turns keep their failure, a deleted conversation gets nothing,
// the user's title wins over the model's, old turns fold into the summary past the budget (the digest written then
// only, reading just the folded turns), and a model that answers badly never stops a turn from being persisted.
import { beforeEach, describe, expect, it } from 'vitest';
import {
  MAIN_BRANCH,
  type ConversationMessage,
  type MessageCompleted,
  type OrdinalGap,
  type TurnBranch,
} from '../chat/contracts.js';
import { LlmError, type CompleteJsonRequest, type LlmGateway, type LlmReply } from '../llm/llm-gateway.js';
import {
  MemoryConversationHeaders,
  MemoryConversationMessages,
  MemorySessionMemory,
} from '../../test/support/in-memory-history.js';
import { MemorySessions } from '../../test/support/in-memory-ports.js';
import { completedExchange } from '../../test/support/message-completed.js';
import { EXCHANGE_INDEX_FORMAT, SESSION_SUMMARY_FORMAT } from './history-llm.js';
import type { MessagePageOptions } from './conversation-messages.js';
import { FOLD_PAGE } from './fold-turns.js';
import { persistTurn, type HistoryWorkerServices } from './persist-turn.js';

const userId = 'user_001';
const sessionId = '0f8fad5b-d9cb-469f-a165-70867728950e';
const at = '2026-11-22T10:00:00.000Z';

type Answer = (name: string, input: Record<string, unknown>) => unknown;

/** A model that answers completeJson from the test's function and validates as the real gateway does. */
class RecordingModel implements LlmGateway {
  readonly requests: CompleteJsonRequest<unknown>[] = [];
  constructor(public answer: Answer) {}
  completeJson<T>(request: CompleteJsonRequest<T>): Promise<T> {
    this.requests.push(request);
    const input = JSON.parse(request.messages.at(-1)?.content ?? '{}') as Record<string, unknown>;
    const parsed = request.schema.safeParse(this.answer(request.name, input));
    return parsed.success
      ? Promise.resolve(parsed.data)
      : Promise.reject(new LlmError(`unusable "${request.name}" JSON`, { retryable: true }));
  }
  inputs(name: string): Record<string, unknown>[] {
    return this.requests
      .filter((request) => request.name === name)
      .map((request) => JSON.parse(request.messages.at(-1)?.content ?? '{}') as Record<string, unknown>);
  }
  streamChat(): Promise<LlmReply> {
    return Promise.reject(new Error('not used'));
  }
  embed(): Promise<number[][]> {
    return Promise.reject(new Error('not used'));
  }
  probe() {
    return Promise.resolve({ ok: true, detail: 'recording model' });
  }
}

const goodAnswer: Answer = (name, input) =>
  name === SESSION_SUMMARY_FORMAT
    ? {
        summary: [
          input['previousSummary'],
          ...(input['exchanges'] as { question: string }[]).map((e) => `asked ${e.question}`),
        ]
          .filter((part) => part !== '')
          .join('; '),
      }
    : 'firstQuestion' in input
      ? { line: lineFor(input), tags: ['Topic', 'topic'], title: 'Model title' }
      : { line: lineFor(input), tags: ['topic'] };
const lineFor = (input: Record<string, unknown>) => `line: ${String(input['question']).slice(0, 20)}`;

class SilentLog {
  readonly lines: string[] = [];
  log = (...args: unknown[]) => void this.lines.push(args.join(' '));
  warn = (...args: unknown[]) => void this.lines.push(args.join(' '));
}

let headers: MemoryConversationHeaders;
let messages: MemoryConversationMessages;
let memory: MemorySessionMemory;
let model: RecordingModel;
let sessions: MemorySessions;
let services: HistoryWorkerServices;
let log: SilentLog;
let hot: ConversationMessage[];
/** Working memory's messages of other branches (offPath). */
let hotOffPath: ConversationMessage[];

beforeEach(async () => {
  sessions = new MemorySessions();
  headers = new MemoryConversationHeaders();
  messages = new MemoryConversationMessages();
  memory = new MemorySessionMemory(messages);
  model = new RecordingModel(goodAnswer);
  log = new SilentLog();
  hot = [];
  hotOffPath = [];
  services = {
    headers,
    messages,
    sessionMemory: memory,
    llm: model,
    workingMemory: {
      load: () =>
        Promise.resolve({ userId, sessionId, messages: hot, offPath: hotOffPath, messageCount: hot.length }),
    },
    sessions,
    settings: { promptTokenBudget: 4_000 },
    now: () => new Date(at),
  };
  await startConversation('What is the capital of France?');
});

function startConversation(firstUserText: string) {
  return headers.touch({
    userId,
    sessionId,
    createdAt: at,
    lastActivity: at,
    messageCount: 2,
    preview: 'p',
    firstUserText,
  });
}

const chatId = (n: number) => `7c9e6679-7425-40de-944b-${String(n).padStart(12, '0')}`;

/** Turn n: the user's message at ordinal 2n and the answer (with a tool call) at 2n + 1. */
function turn(
  n: number,
  options: { question?: string; answer?: string; outcome?: 'completed' | 'failed'; branch?: TurnBranch } = {},
): MessageCompleted {
  return completedExchange({
    userId,
    sessionId,
    chatMessageId: chatId(n),
    ordinal: 2 * n,
    question: options.question ?? `question ${n}`,
    at,
    ...(options.outcome === 'failed'
      ? {}
      : {
          answer: {
            content: options.answer ?? `answer ${n}`,
            finishReason: 'stop',
            toolCalls: [
              { id: 'c1', name: 'add_numbers', arguments: '{"a":1}', result: '1', isError: false, round: 0 },
            ],
            usage: { promptTokens: 10, completionTokens: 5, totalTokens: 15 },
          },
        }),
    ...(options.branch === undefined ? {} : { branch: options.branch }),
  });
}

const stored = () => [...(messages.items.get(`${userId}\u0000${sessionId}`)?.values() ?? [])];
const header = async () => (await headers.get(userId, sessionId))!;
const digest = async () => (await memory.getDigest(userId, sessionId))?.digest;

describe('persistTurn', () => {
  it('stores each message as an item with its tool calls, the exchange entry, and records the turn', async () => {
    expect(await persistTurn(services, turn(0), log)).toBe('persisted');

    expect(stored()).toEqual([
      expect.objectContaining({
        id: `${chatId(0)}_user`,
        kind: 'message',
        userId,
        sessionId,
        ordinal: 0,
        content: 'question 0',
      }),
      expect.objectContaining({
        id: `${chatId(0)}_assistant`,
        kind: 'message',
        ordinal: 1,
        toolCalls: [expect.objectContaining({ name: 'add_numbers', result: '1' })],
      }),
    ]);
    expect(await memory.getExchange(userId, sessionId, chatId(0))).toEqual({
      exchangeId: chatId(0),
      ordinal: 0,
      line: 'line: question 0',
      tags: ['topic'],
      at,
    });
    // 'question 0' is 10 bytes → 4 tokens, 'answer 0' 8 → 3; each with 4 of overhead.
    expect(await header()).toMatchObject({
      persistedCount: 2,
      persistedAt: at,
      tokens: { prompt: 10, completion: 5, total: 15 },
      textTokens: 15,
    });
    // Nothing to fold yet: no digest.
    expect(await digest()).toBeUndefined();
  });

  it('stores items once and adds tokens once, however often the event is delivered', async () => {
    for (let i = 0; i < 4; i++) await persistTurn(services, turn(0), log);
    await persistTurn(services, turn(1), log);
    for (let i = 0; i < 3; i++) {
      await persistTurn(services, turn(1), log);
      await persistTurn(services, turn(0), log);
    }

    expect(stored()).toHaveLength(4);
    expect(await header()).toMatchObject({
      persistedCount: 4,
      tokens: { prompt: 20, completion: 10, total: 30 },
      textTokens: 30,
    });
    // A redelivery after the turn was recorded costs two point reads: no model call.
    expect(model.requests).toHaveLength(2);
  });

  it('stores an older turn replayed after later ones (from the dead-letter queue), without its tokens', async () => {
    await persistTurn(services, turn(1), log);
    expect(await persistTurn(services, turn(0), log)).toBe('persisted');
    expect(
      stored()
        .map((m) => m.ordinal)
        .sort(),
    ).toEqual([0, 1, 2, 3]);
    expect(await header()).toMatchObject({ persistedCount: 4, tokens: { total: 15 }, textTokens: 15 });
    expect(log.lines.join('\n')).toMatch(/arrived after later turns/);
  });

  it('redone after failing before the turn was recorded, adds nothing twice', async () => {
    const record = headers.recordPersisted.bind(headers);
    let failures = 1;
    headers.recordPersisted = ((...args: Parameters<typeof record>) =>
      failures-- > 0
        ? Promise.reject(new Error('Cosmos DB unavailable'))
        : record(...args)) as typeof headers.recordPersisted;

    await expect(persistTurn(services, turn(0), log)).rejects.toThrow('Cosmos DB unavailable');
    expect(await persistTurn(services, turn(0), log)).toBe('persisted');

    expect(stored()).toHaveLength(2);
    expect(await header()).toMatchObject({ tokens: { total: 15 }, textTokens: 15 });
  });

  it('stores a failed turn with its failure, without an exchange entry', async () => {
    await persistTurn(services, turn(0, { outcome: 'failed' }), log);

    expect(stored()).toEqual([
      expect.objectContaining({
        ordinal: 0,
        failure: { code: 'model_unavailable', message: 'The model did not answer.' },
      }),
    ]);
    expect(memory.exchanges.size).toBe(0);
    expect(model.requests).toHaveLength(0);
    expect(await header()).toMatchObject({ persistedCount: 1, tokens: { total: 0 }, textTokens: 8 });
  });

  it("keeps the opening turn's system prompt beside the messages, once, and never as a numbered message", async () => {
    const prompt = {
      content: 'You are helpful.\n\n## Their interests\n- Sailing.',
      personalised: true,
      createdAt: at,
    };
    for (let i = 0; i < 3; i++) await persistTurn(services, { ...turn(0), systemPrompt: prompt }, log);
    // A later announcement with another prompt (there is none in practice) never replaces the first.
    await persistTurn(services, { ...turn(1), systemPrompt: { ...prompt, content: 'other' } }, log);
    expect(await messages.getSystemPrompt(userId, sessionId)).toEqual(prompt);
    expect(stored().map((m) => m.ordinal)).toEqual([0, 1, 2, 3]);
    expect(await header()).toMatchObject({ persistedCount: 4 });
    // Deleting the conversation's items removes it with them.
    await messages.deleteAll(userId, sessionId);
    expect(await messages.getSystemPrompt(userId, sessionId)).toBeUndefined();
  });

  it('writes nothing for a deleted conversation', async () => {
    await headers.delete(userId, sessionId);
    const prompt = { content: 'You are helpful.', personalised: false, createdAt: at };
    expect(await persistTurn(services, { ...turn(0), systemPrompt: prompt }, log)).toBe(
      'conversation-deleted',
    );
    expect(messages.items.size + messages.systemPrompts.size).toBe(0);
    expect(memory.exchanges.size + memory.digests.size).toBe(0);
    expect(model.requests).toHaveLength(0);
  });

  it('removes what it wrote when the conversation is deleted while it runs', async () => {
    model.answer = (name, input) => {
      void headers.delete(userId, sessionId);
      return goodAnswer(name, input);
    };
    expect(await persistTurn(services, turn(0), log)).toBe('conversation-deleted');
    expect(stored()).toEqual([]);
    expect(memory.exchanges.size + memory.digests.size).toBe(0);
  });

  it('writes nothing for a conversation being deleted whose header is still there (the tombstone says so)', async () => {
    await sessions.create(userId, sessionId);
    await sessions.markDeleting(userId, sessionId);
    expect(await persistTurn(services, turn(0), log)).toBe('conversation-deleted');
    expect(stored()).toEqual([]);
    expect(memory.exchanges.size + memory.digests.size).toBe(0);
    expect(model.requests).toHaveLength(0);
  });

  it('takes back what it wrote, header included, when the delete marks the session while it runs', async () => {
    await sessions.create(userId, sessionId);
    model.answer = (name, input) => {
      // Marked only: the delete has not reached the header yet, and a writer's header is what brings a list back.
      void sessions.markDeleting(userId, sessionId);
      return goodAnswer(name, input);
    };
    expect(await persistTurn(services, turn(0), log)).toBe('conversation-deleted');
    expect(stored()).toEqual([]);
    expect(memory.exchanges.size + memory.digests.size).toBe(0);
    expect(await headers.get(userId, sessionId)).toBeUndefined();
  });

  describe('titles', () => {
    it('asks for a title with the second exchange, from how the conversation began', async () => {
      await persistTurn(services, turn(0), log);
      expect((await header()).titleSource).toBe('first-message');
      await persistTurn(services, turn(1), log);

      expect(model.inputs(EXCHANGE_INDEX_FORMAT)[1]).toEqual({
        firstQuestion: 'What is the capital of France?',
        question: 'question 1',
        answer: 'answer 1',
      });
      expect(await header()).toMatchObject({ title: 'Model title', titleSource: 'model' });
      expect((await memory.getExchange(userId, sessionId, chatId(1)))?.tags).toEqual(['topic']);

      await persistTurn(services, turn(2), log);
      expect(model.inputs(EXCHANGE_INDEX_FORMAT)[2]).not.toHaveProperty('firstQuestion');
    });

    it('asks at the first exchange when it has enough text', async () => {
      await persistTurn(services, turn(0, { answer: 'x'.repeat(200) }), log);
      expect(await header()).toMatchObject({ title: 'Model title', titleSource: 'model' });
    });

    it("never puts the model's title over the user's", async () => {
      await headers.setTitle(userId, sessionId, 'My trip', 'user');
      await persistTurn(services, turn(0, { answer: 'x'.repeat(300) }), log);
      await persistTurn(services, turn(1), log);
      expect(model.inputs(EXCHANGE_INDEX_FORMAT).some((input) => 'firstQuestion' in input)).toBe(false);
      expect(await header()).toMatchObject({ title: 'My trip', titleSource: 'user' });
    });

    it("keeps the user's title set while the model was titling", async () => {
      model.answer = (name, input) => {
        void headers.setTitle(userId, sessionId, 'Renamed meanwhile', 'user');
        return goodAnswer(name, input);
      };
      await persistTurn(services, turn(0, { answer: 'x'.repeat(300) }), log);
      expect(await header()).toMatchObject({ title: 'Renamed meanwhile', titleSource: 'user' });
    });
  });

  it('persists the turn when the model answers out of schema: the question stands in, the title stays', async () => {
    model.answer = () => ({ line: '', tags: [], title: 'x'.repeat(500) });
    expect(
      await persistTurn(services, turn(0, { question: 'Where  is\nRome?', answer: 'y'.repeat(300) }), log),
    ).toBe('persisted');

    expect(stored()).toHaveLength(2);
    expect(await memory.getExchange(userId, sessionId, chatId(0))).toMatchObject({
      line: 'Q: Where is Rome?',
      tags: [],
    });
    expect(await header()).toMatchObject({
      title: 'What is the capital of France?',
      titleSource: 'first-message',
      persistedCount: 2,
    });
    expect(log.lines.join('\n')).toMatch(/no index line from the model/);
  });

  describe('the rolling summary', () => {
    // Each turn: a 300-byte question and a 300-byte answer, (100 + 4) * 2 = 208 tokens. Budget 1000: a fold
    // starts when the unfolded turns pass 500 (the third turn) and leaves at most 250.
    const long = (n: number) =>
      turn(n, { question: `question ${n} `.padEnd(300, 'q'), answer: `answer ${n} `.padEnd(300, 'a') });
    const summaries = () => model.requests.filter((r) => r.name === SESSION_SUMMARY_FORMAT).length;

    beforeEach(() => {
      services.settings.promptTokenBudget = 1_000;
    });

    it('folds the oldest turns into the summary once they pass half the budget', async () => {
      await persistTurn(services, long(0), log);
      await persistTurn(services, long(1), log);
      expect(summaries()).toBe(0);
      expect(await digest()).toBeUndefined();

      await persistTurn(services, long(2), log);

      expect(model.inputs(SESSION_SUMMARY_FORMAT)).toEqual([
        {
          previousSummary: '',
          exchanges: [
            { question: long(0).messages[0]?.content, answer: long(0).messages[1]?.content },
            { question: long(1).messages[0]?.content, answer: long(1).messages[1]?.content },
          ],
        },
      ]);
      const after = await digest();
      expect(after).toEqual({
        summary: `asked ${long(0).messages[0]?.content}; asked ${long(1).messages[0]?.content}`,
        summarizedThrough: 4,
        summarizedTokens: 416,
        recentExchanges: [expect.objectContaining({ exchangeId: chatId(0) }), expect.anything()],
        updatedAt: at,
        gaps: [],
      });
      expect(after?.recentExchanges.map((e) => e.exchangeId)).toEqual([chatId(0), chatId(1)]);
      expect(after?.recentExchanges[0]?.line).toBe('line: question 0 qqqqqqqqq');
      expect(await header()).toMatchObject({ textTokens: 624 });

      // The next fold starts from the summary so far and reads only the folded turns.
      await persistTurn(services, long(3), log);
      await persistTurn(services, long(4), log);
      const second = model.inputs(SESSION_SUMMARY_FORMAT)[1];
      expect(second?.['previousSummary']).toBe(after?.summary);
      expect((second?.['exchanges'] as unknown[]).length).toBe(2);
      expect(await digest()).toMatchObject({ summarizedThrough: 8, summarizedTokens: 832 });
    });

    it('writes the digest only on the turns that fold', async () => {
      const put = memory.putDigest.bind(memory);
      const writes: number[] = [];
      let current = 0;
      memory.putDigest = (...args) => {
        writes.push(current);
        return put(...args);
      };
      for (current = 0; current < 10; current++) await persistTurn(services, long(current), log);

      // 208 tokens a turn: the unfolded turns pass 500 at the third turn, then every second turn.
      expect(writes).toEqual([2, 4, 6, 8]);
      expect(summaries()).toBe(4);
      expect(await digest()).toMatchObject({ summarizedThrough: 16, summarizedTokens: 1664 });
      expect(await header()).toMatchObject({ textTokens: 2080 });
    });

    it('reads only the pages of the turns it folds, from where the summary ends', async () => {
      // 28 tokens a turn (two 30-byte texts): with a budget of 4000 the 72nd turn passes 2000 and folds the
      // oldest 37 (74 messages: two pages of 50) to leave at most 1000.
      services.settings.promptTokenBudget = 4_000;
      model.answer = (name, input) =>
        name === SESSION_SUMMARY_FORMAT ? { summary: 'Short questions.' } : goodAnswer(name, input);
      const short = (n: number) => turn(n, { question: 'q'.repeat(30), answer: 'a'.repeat(30) });
      const page = messages.page.bind(messages);
      const reads: MessagePageOptions[] = [];
      messages.page = (user, session, options) => {
        reads.push(options);
        return page(user, session, options);
      };

      for (let n = 0; n < 71; n++) await persistTurn(services, short(n), log);
      expect(reads).toEqual([]);
      await persistTurn(services, short(71), log);
      expect(reads).toEqual([
        { order: 'asc', after: undefined, limit: FOLD_PAGE },
        { order: 'asc', after: 49, limit: FOLD_PAGE },
      ]);
      expect(await digest()).toMatchObject({ summarizedThrough: 74, summarizedTokens: 37 * 28 });
      const [first] = model.inputs(SESSION_SUMMARY_FORMAT);
      expect((first?.['exchanges'] as unknown[]).length).toBe(37);

      reads.length = 0;
      let n = 72;
      while (reads.length === 0) await persistTurn(services, short(n++), log);
      // The next fold begins after the last folded message, never at the start of the conversation.
      expect(reads[0]).toEqual({ order: 'asc', after: 73, limit: FOLD_PAGE });
      expect(reads).toHaveLength(2);
      expect(await digest()).toMatchObject({ summarizedThrough: 148 });
    });

    it('folds once and counts the turn once under redelivery', async () => {
      await persistTurn(services, long(0), log);
      await persistTurn(services, long(1), log);
      // The turn that folds fails after its fold, before it is recorded: the event is delivered again.
      const record = headers.recordPersisted.bind(headers);
      let failures = 1;
      headers.recordPersisted = ((...args: Parameters<typeof record>) =>
        failures-- > 0
          ? Promise.reject(new Error('Cosmos DB unavailable'))
          : record(...args)) as typeof headers.recordPersisted;
      await expect(persistTurn(services, long(2), log)).rejects.toThrow('Cosmos DB unavailable');
      const folded = await memory.getDigest(userId, sessionId);
      expect(folded?.digest).toMatchObject({ summarizedThrough: 4, summarizedTokens: 416 });

      expect(await persistTurn(services, long(2), log)).toBe('persisted');
      expect(await persistTurn(services, long(2), log)).toBe('already-persisted');

      expect(summaries()).toBe(1);
      expect(await memory.getDigest(userId, sessionId)).toEqual(folded);
      expect(await header()).toMatchObject({ persistedCount: 6, textTokens: 624 });
    });

    it('leaves the digest as it was when the model gives no summary, and tries again next turn', async () => {
      const bad: typeof goodAnswer = (name, input) =>
        name === SESSION_SUMMARY_FORMAT ? { summary: 'word '.repeat(400) } : goodAnswer(name, input);
      model.answer = bad;
      for (const n of [0, 1, 2]) await persistTurn(services, long(n), log);
      expect(await digest()).toBeUndefined();
      expect(log.lines.join('\n')).toMatch(/keeps 2 turns out of its summary/);

      model.answer = goodAnswer;
      await persistTurn(services, long(3), log);
      const folded = await memory.getDigest(userId, sessionId);
      expect(folded?.digest).toMatchObject({ summarizedThrough: 6, summarizedTokens: 624 });

      model.answer = bad;
      await persistTurn(services, long(4), log);
      await persistTurn(services, long(5), log);
      expect(await memory.getDigest(userId, sessionId)).toEqual(folded);

      model.answer = goodAnswer;
      await persistTurn(services, long(6), log);
      expect(await digest()).toMatchObject({ summarizedThrough: 12, summarizedTokens: 1248 });
    });

    it('redoes its fold when the digest changed under it', async () => {
      await persistTurn(services, long(0), log);
      await persistTurn(services, long(1), log);
      const put = memory.putDigest.bind(memory);
      let conflicts = 2;
      memory.putDigest = (...args) => (conflicts-- > 0 ? Promise.resolve('conflict') : put(...args));
      await persistTurn(services, long(2), log);
      expect(await digest()).toMatchObject({ summarizedThrough: 4, summarizedTokens: 416 });
    });
  });

  it('takes tool results whole from working memory when the event carries them cut', async () => {
    const event = turn(0);
    const whole = structuredClone(event.messages);
    whole[1]!.toolCalls![0]!.result = 'r'.repeat(5_000);
    event.messages[1]!.toolCalls![0]!.result = 'r'.repeat(1_000);
    hot = whole;
    await persistTurn(services, { ...event, complete: false }, log);
    expect(stored()[1]?.toolCalls?.[0]?.result).toHaveLength(5_000);

    hot = [];
    await headers.delete(userId, sessionId);
    await startConversation('again');
    messages.items.clear();
    await persistTurn(services, { ...event, complete: false }, log);
    expect(stored()[1]?.toolCalls?.[0]?.result).toHaveLength(1_000);
    expect(log.lines.join('\n')).toMatch(/tool results cut/);
  });

  it('takes the sources whole from working memory when the event carries them cut or left out', async () => {
    const source = {
      chunkId: 'doc:1',
      documentId: 'a'.repeat(32),
      title: 'Employee Handbook',
      pages: [4],
      citation: 'Employee Handbook, p. 4',
      excerpt: 'Parents get twenty weeks of paid leave.',
      score: 0.03,
    };
    const event = turn(0);
    const whole = structuredClone(event.messages);
    whole[1]!.sources = [source];
    hot = whole;
    event.messages[1]!.sources = [{ ...source, excerpt: '' }];
    await persistTurn(services, { ...event, complete: false }, log);
    expect(stored()[1]?.sources).toEqual([source]);

    messages.items.clear();
    await headers.delete(userId, sessionId);
    await startConversation('again');
    delete event.messages[1]!.sources;
    await persistTurn(services, { ...event, complete: false }, log);
    expect(stored()[1]?.sources).toEqual([source]);
  });

  it('takes them whole from a branch the user has since left, beside the window', async () => {
    const event = turn(0);
    const whole = structuredClone(event.messages);
    whole[1]!.toolCalls![0]!.result = 'r'.repeat(5_000);
    event.messages[1]!.toolCalls![0]!.result = 'r'.repeat(1_000);
    hotOffPath = whole;
    await persistTurn(services, { ...event, complete: false }, log);
    expect(stored()[1]?.toolCalls?.[0]?.result).toHaveLength(5_000);
  });
});

describe('persistTurn on branches', () => {
  // Each turn: a 300-byte question and a 300-byte answer, 208 tokens. Budget 1000: a fold starts when the path's
  // unfolded turns pass 500 and leaves at most 250. Turn n is the n-th committed: ordinals 2n and 2n + 1.
  const long = (n: number, branch?: TurnBranch) => {
    return turn(n, {
      question: `question ${n} `.padEnd(300, 'q'),
      answer: `answer ${n} `.padEnd(300, 'a'),
      ...(branch === undefined ? {} : { branch }),
    });
  };
  const main = (parent: number | null): TurnBranch => ({
    parentChatMessageId: parent === null ? null : chatId(parent),
    branchId: MAIN_BRANCH,
    gaps: [],
  });
  const on = (
    parent: number,
    branchOf: number,
    gaps: OrdinalGap[],
    fork?: 'edit' | 'regenerate',
    replaces?: number,
  ) => ({
    parentChatMessageId: chatId(parent),
    branchId: chatId(branchOf),
    ...(fork ? { origin: fork, alternativeOf: chatId(replaces ?? 0) } : {}),
    gaps,
  });
  /** The questions each summary call was given, by turn number. */
  const folded = () =>
    model
      .inputs(SESSION_SUMMARY_FORMAT)
      .map((input) =>
        (input['exchanges'] as { question: string }[]).map((e) => Number(e.question.split(' ')[1])),
      );
  const persist = async (...events: MessageCompleted[]) => {
    for (const event of events) await persistTurn(services, event, log);
  };

  beforeEach(() => {
    services.settings.promptTokenBudget = 1_000;
  });

  it('a regenerate above the summary keeps it, and counts only the path: the replaced answer is never folded', async () => {
    await persist(long(0, main(null)), long(1, main(0)), long(2, main(1)));
    expect(await digest()).toMatchObject({ summarizedThrough: 4, summarizedTokens: 416, gaps: [] });
    // Turn 3 regenerates turn 2: it follows turn 1, and ordinals 4 and 5 are off its path.
    const path = [{ from: 4, to: 6 }];
    await persist(long(3, on(1, 3, path, 'regenerate', 2)));
    const rebased = await digest();
    expect(rebased).toMatchObject({
      summary: `asked ${long(0).messages[0]?.content}; asked ${long(1).messages[0]?.content}`,
      summarizedThrough: 4,
      gaps: path,
      // The header counts four turns (832); the path's unfolded part is turn 3 alone (208).
      summarizedTokens: 624,
    });
    expect(rebased?.recentExchanges.map((e) => e.exchangeId)).toEqual([chatId(0), chatId(1)]);
    expect(folded()).toEqual([[0, 1]]);

    // Turn 4 brings the path's unfolded part to 416 (the header's count less the digest's would say 624 and fold).
    await persist(long(4, on(3, 3, path)));
    expect(folded()).toEqual([[0, 1]]);
    await persist(long(5, on(4, 3, path)));
    expect(folded()).toEqual([
      [0, 1],
      [3, 4],
    ]);
    expect(await digest()).toMatchObject({ summarizedThrough: 10, summarizedTokens: 1040, gaps: path });
    expect((await digest())?.recentExchanges.map((e) => e.exchangeId)).toEqual([0, 1, 3, 4].map(chatId));
  });

  it('an edit below the summary starts again from the checkpoint on its path, reading only what is above it', async () => {
    for (let n = 0; n <= 6; n++) await persist(long(n, main(n === 0 ? null : n - 1)));
    expect(folded()).toEqual([
      [0, 1],
      [2, 3],
      [4, 5],
    ]);
    expect(await digest()).toMatchObject({ summarizedThrough: 12 });
    const page = messages.page.bind(messages);
    const reads: MessagePageOptions[] = [];
    messages.page = (user, session, options) => {
      reads.push(options);
      return page(user, session, options);
    };

    // Turn 7 edits turn 3 (ordinals 6, 7): it follows turn 2, and everything from 6 up to it is off its path.
    const path = [{ from: 6, to: 14 }];
    await persist(long(7, on(2, 7, path, 'edit', 3)));
    expect(await digest()).toMatchObject({
      // The checkpoint of the first fold: turns 0 and 1, all on the new path.
      summary: `asked ${long(0).messages[0]?.content}; asked ${long(1).messages[0]?.content}`,
      summarizedThrough: 4,
      gaps: path,
      // Seven turns before it and itself (1664) less turns 2 and 7 (416), the path's unfolded part.
      summarizedTokens: 1248,
    });
    expect((await digest())?.recentExchanges.map((e) => e.exchangeId)).toEqual([chatId(0), chatId(1)]);
    // One page back from the turn, along its path only.
    expect(reads).toEqual([{ order: 'desc', before: 14, limit: FOLD_PAGE, skip: path }]);
    expect(folded()).toHaveLength(3);

    // The next turn of the edit's branch folds the path: turn 2 and the edit, never turns 3 to 6.
    await persist(long(8, on(7, 7, path)));
    expect(folded().at(-1)).toEqual([2, 7]);
    expect(model.inputs(SESSION_SUMMARY_FORMAT).at(-1)?.['previousSummary']).toBe(
      `asked ${long(0).messages[0]?.content}; asked ${long(1).messages[0]?.content}`,
    );
    expect(await digest()).toMatchObject({ summarizedThrough: 16, gaps: path });
    expect((await digest())?.recentExchanges.map((e) => e.exchangeId)).toEqual([0, 1, 2, 7].map(chatId));
  });

  it('a turn back on the earlier branch takes that branch’s own summary again', async () => {
    for (let n = 0; n <= 6; n++) await persist(long(n, main(n === 0 ? null : n - 1)));
    const mainDigest = await digest();
    const edit = [{ from: 6, to: 14 }];
    await persist(long(7, on(2, 7, edit, 'edit', 3)), long(8, on(7, 7, edit)));
    expect(await digest()).toMatchObject({ summarizedThrough: 16, gaps: edit });

    // The user switches back to the main line and continues its newest turn (6): the edit's turns are its gap.
    const back = [{ from: 14, to: 18 }];
    const summaries = folded().length;
    await persist(long(9, { ...main(6), gaps: back }));
    expect(await digest()).toMatchObject({
      summary: mainDigest?.summary,
      summarizedThrough: 12,
      recentExchanges: mainDigest?.recentExchanges,
      gaps: back,
      // Ten turns (2080) less what is unfolded on the main line: turns 6 and 9 (416).
      summarizedTokens: 1664,
    });
    expect(folded()).toHaveLength(summaries);
    await persist(long(10, { ...main(9), gaps: back }));
    expect(folded().at(-1)).toEqual([6, 9]);
  });

  it('reads a budget of a long path at most when no checkpoint serves it, and starts the summary there', async () => {
    // A long main line persisted while no fold was due (a large budget): no digest, no checkpoint.
    services.settings.promptTokenBudget = 1_000_000;
    for (let n = 0; n < 60; n++) await persist(long(n, main(n === 0 ? null : n - 1)));
    expect(await digest()).toBeUndefined();
    services.settings.promptTokenBudget = 1_000;
    model.answer = (name, input) =>
      name === SESSION_SUMMARY_FORMAT ? { summary: 'Long questions.' } : goodAnswer(name, input);
    const page = messages.page.bind(messages);
    const reads: MessagePageOptions[] = [];
    messages.page = (user, session, options) => {
      reads.push(options);
      return page(user, session, options);
    };

    // Turn 60 regenerates turn 59.
    const path = [{ from: 118, to: 120 }];
    await persist(long(60, on(58, 60, path, 'regenerate', 59)));
    // One page (25 turns, past the budget), not the 59 turns of the path.
    expect(reads).toHaveLength(1);
    expect(log.lines.join('\n')).toMatch(/summary starts again at ordinal 70/);
    // Turns 35 to 58 were read (35 is the first whole one); the oldest are folded until a quarter is left.
    expect(folded()).toEqual([Array.from({ length: 24 }, (_, i) => 35 + i)]);
    expect(await digest()).toMatchObject({ summary: 'Long questions.', summarizedThrough: 118, gaps: path });
    // The lines of the turns before the new start, from the path.
    expect((await digest())?.recentExchanges.map((e) => e.ordinal)).toEqual(
      Array.from({ length: 20 }, (_, i) => 2 * (39 + i)),
    );
    expect(model.inputs(SESSION_SUMMARY_FORMAT)[0]?.['previousSummary']).toBe('');
  });

  it('changes nothing more when a rebasing turn is delivered again, nor for an older turn replayed late', async () => {
    for (let n = 0; n <= 6; n++) await persist(long(n, main(n === 0 ? null : n - 1)));
    const path = [{ from: 6, to: 14 }];
    const record = headers.recordPersisted.bind(headers);
    let failures = 1;
    headers.recordPersisted = ((...args: Parameters<typeof record>) =>
      failures-- > 0
        ? Promise.reject(new Error('Cosmos DB unavailable'))
        : record(...args)) as typeof headers.recordPersisted;
    await expect(persistTurn(services, long(7, on(2, 7, path, 'edit', 3)), log)).rejects.toThrow();
    const rebased = await memory.getDigest(userId, sessionId);
    expect(rebased?.digest).toMatchObject({ summarizedThrough: 4, gaps: path });
    const calls = model.requests.length;

    expect(await persistTurn(services, long(7, on(2, 7, path, 'edit', 3)), log)).toBe('persisted');
    expect(await memory.getDigest(userId, sessionId)).toEqual(rebased);
    // The index line again (its write is idempotent), no summary.
    expect(model.requests.slice(calls).map((r) => r.name)).toEqual([EXCHANGE_INDEX_FORMAT]);

    // Turn 5 of the main line arrives again after its items were lost: stored again, the digest left on the edit's path.
    const replayed = long(5, main(4));
    for (const message of replayed.messages)
      messages.items.get(`${userId}\u0000${sessionId}`)?.delete(message.messageId);
    expect(await persistTurn(services, replayed, log)).toBe('persisted');
    expect(await memory.getDigest(userId, sessionId)).toEqual(rebased);
  });
});
