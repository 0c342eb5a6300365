// The history worker's digest step on branches: a turn on another path rebases the digest on it, from the digest,
// the path's checkpoint or nothing, reading a budget at most; redelivered and replayed turns change nothing more.
import { beforeEach, describe, expect, it } from 'vitest';
import { MAIN_BRANCH, type OrdinalGap, type TurnBranch } from '../conversation/branches.js';
import type { MessageCompleted } from '../conversation/message-completed.js';
import type { MessagePageOptions } from './conversation-messages.js';
import { FOLD_PAGE } from './fold-turns.js';
import { EXCHANGE_INDEX_FORMAT, SESSION_SUMMARY_FORMAT } from './history-llm.js';
import {
  chatId,
  digestOf,
  goodAnswer,
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
const digest = () => digestOf(world);

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
    failNextRecord(headers);
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
