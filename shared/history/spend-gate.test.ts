// The history worker under a spent user: it calls no model, the exchange's line falls back to the question, the
// conversation keeps the title its first message gave it, and the digest's fold waits, losing no turn, for a job
// run once the day has room again.
import { beforeEach, describe, expect, it } from 'vitest';
import { MemoryQuotaState } from '../../test/support/in-memory-quota.js';
import {
  chatId,
  digestOf,
  headerOf,
  sessionId,
  turn,
  useHistoryWorker,
  userId,
} from '../../test/support/history-worker.js';
import type { MessageCompleted } from '../conversation/message-completed.js';
import type { QuotaServices } from '../quota/quota-gate.js';
import type { QuotaConfig } from '../quota/settings.js';
import { spendGatedLlm } from '../usage/spend-gated-llm.js';
import { withUsage } from '../usage/usage-scope.js';
import { persistTurn } from './persist-turn.js';
import { SESSION_SUMMARY_FORMAT } from './history-llm.js';

const world = useHistoryWorker();
const limits: QuotaConfig = {
  concurrentTurns: 0,
  messagesPerMinute: 0,
  tokensPerDay: 2_000,
  costPerMonthUsd: 0,
  knowledgeBytes: 0,
  leaseSeconds: 600,
  exempt: { users: [], groups: [] },
};
let used = 0;
beforeEach(() => {
  used = 0;
  const quota: QuotaServices = {
    config: limits,
    state: new MemoryQuotaState(),
    usage: { tokensOnDay: () => Promise.resolve(used), costInMonth: () => Promise.resolve(0) },
  };
  world.services.llm = spendGatedLlm(world.model, quota);
  world.services.settings.promptTokenBudget = 1_000;
});

/** The worker's job for a turn, as its trigger runs it: inside the turn's usage scope. */
const persist = (event: MessageCompleted) =>
  withUsage({ userId, sessionId, turnId: event.chatMessageId, job: 'history', ownRecord: true }, () =>
    persistTurn(world.services, event, world.log),
  );
// 208 tokens a turn: past half the budget (500) at the third turn, when the first two are due to be folded.
const long = (n: number) =>
  turn(n, { question: `question ${n} `.padEnd(300, 'q'), answer: `answer ${n} `.padEnd(300, 'a') });

describe('the history worker with the day spent', () => {
  it('persists every turn without a model call: line from the question, title from the first message', async () => {
    used = 2_000;
    for (const n of [0, 1, 2]) expect(await persist(long(n))).toBe('persisted');

    expect(world.model.requests).toEqual([]);
    expect(await world.memory.getExchange(userId, sessionId, chatId(1))).toMatchObject({
      line: expect.stringMatching(/^Q: question 1 q+/),
      tags: [],
    });
    expect(await headerOf(world)).toMatchObject({
      title: 'What is the capital of France?',
      titleSource: 'first-message',
      persistedCount: 6,
    });
    // The fold due at the third turn waits: nothing is summarised, nothing is marked summarised.
    expect(await digestOf(world)).toBeUndefined();
    expect(world.log.lines.join('\n')).toMatch(/QUOTA_TOKENS_PER_DAY/);
  });

  it('folds the turns it had to leave, and titles the conversation, on the first job with room', async () => {
    used = 2_000;
    for (const n of [0, 1, 2, 3]) await persist(long(n));
    expect(await digestOf(world)).toBeUndefined();

    used = 0;
    await persist(long(4));
    // The turns that waited are folded now, from the first (all but the turn itself): none is skipped.
    const [folding] = world.model.inputs(SESSION_SUMMARY_FORMAT);
    expect((folding?.['exchanges'] as { question: string }[]).map((e) => e.question.slice(0, 10))).toEqual([
      'question 0',
      'question 1',
      'question 2',
      'question 3',
    ]);
    expect(await digestOf(world)).toMatchObject({ summarizedThrough: 8 });
    expect(await headerOf(world)).toMatchObject({ title: 'Model title', titleSource: 'model' });
  });
});
