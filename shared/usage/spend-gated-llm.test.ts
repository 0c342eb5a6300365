// The background workers' gateway: inside a job's usage scope each call is made only while its user's tokens today
// (used and reserved by turns under way) are below the limit; a refusal names the limit and is not retryable.
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { MemoryQuotaState } from '../../test/support/in-memory-quota.js';
import type { CompleteJsonRequest, LlmGateway } from '../llm/llm-gateway.js';
import { admitTurn, type QuotaServices } from '../quota/quota-gate.js';
import { quotaConfig, quotaSettings } from '../quota/settings.js';
import type { UsageReader } from '../quota/usage-reader.js';
import { readSettings, SettingProblems, settingsOf } from '../settings/setting.js';
import { SpendRefusedError, spendGatedLlm } from './spend-gated-llm.js';
import { withUsage } from './usage-scope.js';

const AT = new Date('2026-11-26T10:15:20.000Z');
const job = { userId: 'user_001', sessionId: 's1', turnId: 't1', job: 'history', ownRecord: true };

class FakeUsage implements UsageReader {
  tokens = 0;
  reads = 0;
  tokensOnDay() {
    this.reads += 1;
    return Promise.resolve(this.tokens);
  }
  costInMonth() {
    this.reads += 1;
    return Promise.resolve(0);
  }
}

/** A model that counts the calls that reach it. */
class CountingModel implements LlmGateway {
  calls: string[] = [];
  streamChat() {
    this.calls.push('chat');
    return Promise.resolve({ content: 'hi', reasoning: '', toolCalls: [], finishReason: 'stop' as const });
  }
  completeJson<T>(request: CompleteJsonRequest<T>) {
    this.calls.push(request.name);
    return Promise.resolve({} as T);
  }
  embed(texts: string[]) {
    this.calls.push('embed');
    return Promise.resolve(texts.map(() => [0]));
  }
  probe() {
    return Promise.resolve({ ok: true, detail: '' });
  }
}

function setUp(env: Record<string, string>) {
  const problems = new SettingProblems(settingsOf(quotaSettings));
  const values = readSettings(quotaSettings, env, problems);
  problems.throwIfAny();
  const usage = new FakeUsage();
  const quota: QuotaServices = {
    config: quotaConfig(values),
    state: new MemoryQuotaState(),
    usage,
    now: () => AT,
  };
  const model = new CountingModel();
  return { quota, usage, model, llm: spendGatedLlm(model, quota) };
}

const ask = (llm: LlmGateway) =>
  Promise.all([
    llm.completeJson({ messages: [], schema: z.object({}), name: 'exchange_index' }),
    llm.embed(['a summary']),
    llm.streamChat({ messages: [] }),
  ]);

async function refusedBy(work: Promise<unknown>): Promise<SpendRefusedError> {
  const error = await work.then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(SpendRefusedError);
  return error as SpendRefusedError;
}

describe('the spend-gated gateway', () => {
  it('calls the model while the day has room', async () => {
    const { usage, model, llm } = setUp({ QUOTA_TOKENS_PER_DAY: '2000' });
    usage.tokens = 1_999;
    await withUsage(job, () => ask(llm));
    expect(model.calls.sort()).toEqual(['chat', 'embed', 'exchange_index']);
  });

  it("calls nothing once the day's tokens are used up, with a refusal that is not retryable", async () => {
    const { usage, model, llm } = setUp({ QUOTA_TOKENS_PER_DAY: '2000' });
    usage.tokens = 2_000;
    const calls: (() => Promise<unknown>)[] = [
      () => llm.completeJson({ messages: [], schema: z.object({}), name: 'exchange_index' }),
      () => llm.embed(['a summary']),
      () => llm.streamChat({ messages: [] }),
    ];
    for (const call of calls) {
      const error = await refusedBy(withUsage(job, call));
      expect(error.retryable).toBe(false);
      expect(error.refusal).toMatchObject({ limit: 'tokens-per-day', allowed: 2_000, current: 2_000 });
      expect(error.message).toMatch(/QUOTA_TOKENS_PER_DAY/);
      expect(error.message).toMatch(/background work .* resumes after midnight UTC/);
    }
    expect(model.calls).toEqual([]);
  });

  it('counts what turns under way reserve, as the front door does', async () => {
    const { quota, usage, model, llm } = setUp({
      QUOTA_TOKENS_PER_DAY: '2000',
      QUOTA_TURN_TOKEN_ESTIMATE: '1000',
    });
    usage.tokens = 1_000;
    await admitTurn(quota, { userId: job.userId }, { sessionId: 's2', chatMessageId: 'm2' });
    const error = await refusedBy(withUsage(job, () => llm.embed(['a summary'])));
    expect(error.refusal.current).toBe(2_000);
    // Another user's spend is their own.
    await withUsage({ ...job, userId: 'user_002' }, () => llm.embed(['a summary']));
    expect(model.calls).toEqual(['embed']);
  });

  it('lets the calls of a user QUOTA_EXEMPT names through, reading nothing', async () => {
    const { usage, model, llm } = setUp({ QUOTA_TOKENS_PER_DAY: '2000', QUOTA_EXEMPT: 'user_001' });
    usage.tokens = 5_000;
    await withUsage(job, () => ask(llm));
    expect(model.calls).toHaveLength(3);
    expect(usage.reads).toBe(0);
  });

  it("lets through the calls of a job whose turn's identity named a QUOTA_EXEMPT group, and no other", async () => {
    const { usage, model, llm } = setUp({ QUOTA_TOKENS_PER_DAY: '2000', QUOTA_EXEMPT: 'group:g-staff' });
    usage.tokens = 5_000;
    await withUsage({ ...job, groups: ['g-other', 'g-staff'] }, () => ask(llm));
    expect(model.calls).toHaveLength(3);
    await expect(withUsage({ ...job, groups: ['g-other'] }, () => ask(llm))).rejects.toBeInstanceOf(
      SpendRefusedError,
    );
    expect(model.calls).toHaveLength(3);
  });

  it('reads nothing with the spend limits off, nor outside a job', async () => {
    const off = setUp({ QUOTA_CONCURRENT_TURNS: '2' });
    await withUsage(job, () => ask(off.llm));
    const limited = setUp({ QUOTA_TOKENS_PER_DAY: '10' });
    limited.usage.tokens = 10;
    await ask(limited.llm);
    expect([off.usage.reads, limited.usage.reads]).toEqual([0, 0]);
    expect([off.model.calls.length, limited.model.calls.length]).toEqual([3, 3]);
  });
});
