// The history worker's digest step along one path: old turns fold into the summary past half the budget, the digest
// written then only, reading just the folded turns, once under redelivery, and retried when the model fails.
import { beforeEach, describe, expect, it } from 'vitest';
import type { MessagePageOptions } from './conversation-messages.js';
import { FOLD_PAGE } from './fold-turns.js';
import { SESSION_SUMMARY_FORMAT } from './history-llm.js';
import {
  at,
  chatId,
  digestOf,
  goodAnswer,
  headerOf,
  sessionId,
  turn,
  useHistoryWorker,
  userId,
  failNextRecord,
} from '../../test/support/history-worker.js';
import { persistTurn } from './persist-turn.js';

const world = useHistoryWorker();
let { headers, messages, memory, model, services, log } = world;
beforeEach(() => void ({ headers, messages, memory, model, services, log } = world));
const header = () => headerOf(world);
const digest = () => digestOf(world);

describe('persistTurn', () => {
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
        revision: 1,
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
      // Each revision is marked in working memory before it is written, one more than the digest it replaces.
      expect(world.digestSteps).toEqual([1, 2, 3, 4].flatMap((n) => [`marked ${n}`, `written ${n}`]));
      expect(summaries()).toBe(4);
      expect(await digest()).toMatchObject({ summarizedThrough: 16, summarizedTokens: 1664 });
      expect(await header()).toMatchObject({ textTokens: 2080 });
    });

    it('reads no digest while an unbranched conversation is under the threshold, then one a turn', async () => {
      const get = memory.getDigest.bind(memory);
      const reads: number[] = [];
      let current = 0;
      memory.getDigest = (...args) => {
        reads.push(current);
        return get(...args);
      };
      for (current = 0; current < 5; current++) await persistTurn(services, long(current), log);
      // The whole text passes 500 tokens at the third turn: from then on the digest says how much is unfolded.
      expect(reads).toEqual([2, 3, 4]);
      expect(await digest()).toMatchObject({ summarizedThrough: 8 });
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
      failNextRecord(headers);
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
});
