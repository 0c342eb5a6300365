// The memory worker under a spent user: no summary, embedding or profile call is made, the turn is left out with the
// reason logged (once, however often it is delivered), and the next turn with room is consolidated as usual.
import { beforeEach, describe, expect, it } from 'vitest';
import { MemoryConversationSummaries, MemoryProfileFacts } from '../../test/support/in-memory-memory.js';
import { MemorySessions } from '../../test/support/in-memory-ports.js';
import { MemoryQuotaState } from '../../test/support/in-memory-quota.js';
import { completedExchange } from '../../test/support/message-completed.js';
import type { CompleteJsonRequest, LlmGateway, LlmReply } from '../llm/llm-gateway.js';
import type { QuotaServices } from '../quota/quota-gate.js';
import type { QuotaConfig } from '../quota/settings.js';
import { spendGatedLlm } from '../usage/spend-gated-llm.js';
import { withUsage } from '../usage/usage-scope.js';
import { consolidateTurn, type MemoryWorkerServices } from './consolidate-turn.js';
import { PROFILE_CHANGES_FORMAT } from './memory-llm.js';

const userId = 'user_001';
const at = '2026-11-22T10:00:00.000Z';
const limits: QuotaConfig = {
  concurrentTurns: 0,
  messagesPerMinute: 0,
  tokensPerDay: 0,
  costPerMonthUsd: 1,
  knowledgeBytes: 0,
  leaseSeconds: 600,
  exempt: { users: [], groups: [] },
};

/** A model that keeps every request and answers with a fixed summary and "the user likes tea". */
class CountingModel implements LlmGateway {
  readonly calls: string[] = [];
  completeJson<T>(request: CompleteJsonRequest<T>): Promise<T> {
    this.calls.push(request.name);
    const answer =
      request.name === PROFILE_CHANGES_FORMAT
        ? {
            add: [{ category: 'interests', statement: 'The user likes tea.', evidence: 'I like tea' }],
            reaffirm: [],
            replace: [],
            retract: [],
          }
        : { summary: 'Tea.', themes: ['tea'], persons: [], places: [], user_sentiment: 'neutral' };
    return Promise.resolve(request.schema.parse(answer));
  }
  embed(texts: string[]): Promise<number[][]> {
    this.calls.push('embed');
    return Promise.resolve(texts.map(() => [1, 0, 0]));
  }
  streamChat(): Promise<LlmReply> {
    return Promise.reject(new Error('not used'));
  }
  probe() {
    return Promise.resolve({ ok: true, detail: 'counting model' });
  }
}

let model: CountingModel;
let services: MemoryWorkerServices;
let sessionId: string;
let spentUsd: number;
const warnings: string[] = [];
const log = { log: () => undefined, warn: (line: string) => void warnings.push(line) };

beforeEach(async () => {
  spentUsd = 0;
  warnings.length = 0;
  model = new CountingModel();
  const quota: QuotaServices = {
    config: limits,
    state: new MemoryQuotaState(),
    usage: { tokensOnDay: () => Promise.resolve(0), costInMonth: () => Promise.resolve(spentUsd) },
  };
  const sessions = new MemorySessions();
  services = {
    summaries: new MemoryConversationSummaries(),
    facts: new MemoryProfileFacts(),
    sessions,
    llm: spendGatedLlm(model, quota),
    now: () => new Date(at),
  };
  sessionId = (await sessions.create(userId)).sessionId;
});

const chatId = (n: number) => `7c9e6679-7425-40de-944b-${String(n).padStart(12, '0')}`;
const turn = (n: number) =>
  completedExchange({
    userId,
    sessionId,
    chatMessageId: chatId(n),
    ordinal: 2 * n,
    question: 'I like tea',
    at,
    answer: { content: `answer ${n}`, finishReason: 'stop', toolCalls: [] },
  });
/** The worker's job for a turn, as its trigger runs it: inside the turn's usage scope, on its nth delivery. */
const consolidate = (n: number, deliveryCount = 1) =>
  withUsage({ userId, sessionId, turnId: chatId(n), job: 'memory' }, () =>
    consolidateTurn(services, turn(n), log, { deliveryCount }),
  );

describe('the memory worker with the month spent', () => {
  it('calls no model and leaves the turn out, saying why, once however often it is delivered', async () => {
    spentUsd = 1;
    expect(await consolidate(0)).toEqual({
      status: 'consolidated',
      summary: 'left-out',
      profile: 'left-out',
    });
    // Delivered again: the turn's profile decision (no changes) is recorded, and the summary is refused again.
    for (let delivery = 2; delivery <= 3; delivery++)
      expect(await consolidate(0, delivery)).toEqual({
        status: 'consolidated',
        summary: 'left-out',
        profile: 'already-applied',
      });

    expect(model.calls).toEqual([]);
    expect(await services.summaries.get(userId, sessionId)).toBeUndefined();
    expect(await services.facts.list(userId)).toEqual([]);
    expect(warnings.slice(0, 2)).toEqual([
      expect.stringMatching(
        /left out of the (summary|profile): its user's spend is used up\. .*QUOTA_COST_PER_MONTH/,
      ),
      expect.stringMatching(/left out of the (summary|profile): its user's spend is used up/),
    ]);
  });

  it('consolidates the next turn as usual once the month has room', async () => {
    spentUsd = 1;
    await consolidate(0);
    spentUsd = 0.5;
    expect(await consolidate(1)).toEqual({ status: 'consolidated', summary: 'written', profile: 'applied' });
    expect(model.calls.sort()).toEqual(['conversation_summary', 'embed', PROFILE_CHANGES_FORMAT].sort());
    expect((await services.summaries.get(userId, sessionId))?.summary).toMatchObject({ coveredThrough: 3 });
    expect((await services.facts.list(userId)).map((fact) => fact.statement)).toEqual([
      'The user likes tea.',
    ]);
  });
});
