// Each limit of the quota gate on its own, with an in-memory quota state and a fake usage reader: what it admits,
// what it refuses (the limit named, its values, when to retry) and that a refusal leaves nothing taken.
import { describe, expect, it } from 'vitest';
import { MemoryQuotaState } from '../../test/support/in-memory-quota.js';
import { QuotaExceededError } from '../errors.js';
import { admitTurn, admitUpload, isExempt, releaseTurn, type QuotaServices } from './quota-gate.js';
import { quotaConfig, quotaSettings, type QuotaConfig } from './settings.js';
import { readSettings, SettingProblems, settingsOf } from '../settings/setting.js';
import type { UsageReader } from './usage-reader.js';

const alice = { userId: 'user_001' };
const AT = new Date('2026-11-26T10:15:20.000Z');

function config(env: Record<string, string> = {}): QuotaConfig {
  const problems = new SettingProblems(settingsOf(quotaSettings));
  const values = readSettings(quotaSettings, env, problems);
  problems.throwIfAny();
  return quotaConfig(values);
}

class FakeUsage implements UsageReader {
  tokens = 0;
  cost = 0;
  readonly asked: { userId: string; at: string }[] = [];
  tokensOnDay(userId: string, at: Date) {
    this.asked.push({ userId, at: at.toISOString() });
    return Promise.resolve(this.tokens);
  }
  costInMonth(userId: string, at: Date) {
    this.asked.push({ userId, at: at.toISOString() });
    return Promise.resolve(this.cost);
  }
}

function gate(env: Record<string, string>, now = AT) {
  const state = new MemoryQuotaState();
  const usage = new FakeUsage();
  const services: QuotaServices = { config: config(env), state, usage, now: () => now };
  return { services, state, usage };
}

const turn = (n: number) => ({ sessionId: `session-${n}`, chatMessageId: `message-${n}` });

async function refusal(promise: Promise<unknown>): Promise<QuotaExceededError> {
  const error = await promise.then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(QuotaExceededError);
  return error as QuotaExceededError;
}

describe('the settings', () => {
  it('are all off by default', () => {
    expect(config()).toMatchObject({
      concurrentTurns: 0,
      messagesPerMinute: 0,
      tokensPerDay: 0,
      costPerMonthUsd: 0,
      knowledgeBytes: 0,
      exempt: { users: [], groups: [] },
    });
  });

  it('read dollars and the exempt users and groups', () => {
    const read = config({ QUOTA_COST_PER_MONTH: '7.50', QUOTA_EXEMPT: 'user_003, group:ops ,' });
    expect(read.costPerMonthUsd).toBe(7.5);
    expect(read.exempt).toEqual({ users: ['user_003'], groups: ['ops'] });
    expect(() => config({ QUOTA_COST_PER_MONTH: '-1' })).toThrow(/QUOTA_COST_PER_MONTH/);
  });
});

describe('with every limit off', () => {
  it('admits without reading or writing anything', async () => {
    const { services, state, usage } = gate({});
    await admitTurn(services, alice, turn(1));
    expect(state.leases.size + state.windows.size + usage.asked.length).toBe(0);
  });
});

describe('concurrent turns', () => {
  it('admits up to the limit, refuses the next with 429 and a retry-after, and admits again once one ends', async () => {
    const { services, state } = gate({ QUOTA_CONCURRENT_TURNS: '2' });
    await admitTurn(services, alice, turn(1));
    await admitTurn(services, alice, turn(2));
    const refused = await refusal(admitTurn(services, alice, turn(3)));
    expect(refused).toMatchObject({
      status: 429,
      code: 'quota_exceeded',
      limit: 'concurrent-turns',
      allowed: 2,
      current: 2,
    });
    expect(refused.retryAfterSeconds).toBeGreaterThanOrEqual(1);
    expect(refused.message).toContain('QUOTA_CONCURRENT_TURNS');
    expect(state.running(alice.userId, AT)).toEqual(['session-1/message-1', 'session-2/message-2']);

    await releaseTurn(services, { userId: alice.userId, ...turn(1) });
    await admitTurn(services, alice, turn(3));
    expect(state.running(alice.userId, AT)).toEqual(['session-2/message-2', 'session-3/message-3']);
  });

  it('counts one turn once, and another user not at all; a second admission of a turn never frees its slot', async () => {
    const { services, state } = gate({ QUOTA_CONCURRENT_TURNS: '1' });
    await admitTurn(services, alice, turn(1));
    // The same message posted twice at once, the second failing (409: another text): the first keeps its slot.
    const second = await admitTurn(services, alice, turn(1));
    await second.undo();
    expect(state.running(alice.userId, AT)).toEqual(['session-1/message-1']);
    await admitTurn(services, { userId: 'user_002' }, turn(2));
  });

  it('frees the slot of a turn whose end was never seen once its lease runs out', async () => {
    const first = gate({ QUOTA_CONCURRENT_TURNS: '1', QUOTA_TURN_LEASE_SECONDS: '60' });
    await admitTurn(first.services, alice, turn(1));
    const later: QuotaServices = { ...first.services, now: () => new Date(AT.getTime() + 61_000) };
    await admitTurn(later, alice, turn(2));
    expect(first.state.running(alice.userId, new Date(AT.getTime() + 61_000))).toEqual([
      'session-2/message-2',
    ]);
  });

  it('undoes what it took when the post fails afterwards', async () => {
    const { services, state } = gate({ QUOTA_CONCURRENT_TURNS: '1', QUOTA_MESSAGES_PER_MINUTE: '5' });
    const admission = await admitTurn(services, alice, turn(1));
    await admission.undo();
    expect(state.running(alice.userId, AT)).toEqual([]);
    expect([...state.windows.values()]).toEqual([0]);
  });
});

describe('messages per minute', () => {
  it('refuses past the limit until the minute ends, and a refusal by the slot limit is not counted', async () => {
    const { services, state } = gate({ QUOTA_MESSAGES_PER_MINUTE: '2', QUOTA_CONCURRENT_TURNS: '1' });
    await admitTurn(services, alice, turn(1));
    // Refused for its slot: the minute's count is taken back.
    expect((await refusal(admitTurn(services, alice, turn(2)))).limit).toBe('concurrent-turns');
    expect([...state.windows.values()]).toEqual([1]);
    await releaseTurn(services, { userId: alice.userId, ...turn(1) });
    await admitTurn(services, alice, turn(2));
    await releaseTurn(services, { userId: alice.userId, ...turn(2) });

    const refused = await refusal(admitTurn(services, alice, turn(3)));
    // 10:15:20 → the window ends at 10:16:00.
    expect(refused).toMatchObject({
      limit: 'messages-per-minute',
      allowed: 2,
      current: 2,
      retryAfterSeconds: 40,
    });
    expect(state.running(alice.userId, AT)).toEqual([]);

    const nextMinute: QuotaServices = { ...services, now: () => new Date('2026-11-26T10:16:00.000Z') };
    await admitTurn(nextMinute, alice, turn(3));
  });
});

describe('tokens per day and cost per month', () => {
  it('refuses once the day reaches its tokens, until midnight UTC, and reads usage at the request time', async () => {
    const { services, usage, state } = gate({ QUOTA_TOKENS_PER_DAY: '1000', QUOTA_CONCURRENT_TURNS: '3' });
    usage.tokens = 999;
    await admitTurn(services, alice, turn(1));
    usage.tokens = 1000;
    const refused = await refusal(admitTurn(services, alice, turn(2)));
    expect(refused).toMatchObject({ limit: 'tokens-per-day', allowed: 1000, current: 1000 });
    // 10:15:20 UTC → midnight is 13h44m40s away.
    expect(refused.retryAfterSeconds).toBe(13 * 3600 + 44 * 60 + 40);
    expect(usage.asked).toContainEqual({ userId: alice.userId, at: AT.toISOString() });
    expect(state.running(alice.userId, AT)).toEqual(['session-1/message-1']);
  });

  it('refuses once the month reaches its spend, until the first of the next month', async () => {
    const { services, usage } = gate({ QUOTA_COST_PER_MONTH: '5' });
    usage.cost = 4.99;
    await admitTurn(services, alice, turn(1));
    usage.cost = 5.2;
    const refused = await refusal(admitTurn(services, alice, turn(2)));
    expect(refused).toMatchObject({ limit: 'cost-per-month', allowed: 5, current: 5.2 });
    expect(refused.retryAfterSeconds).toBe((Date.parse('2026-12-01T00:00:00Z') - AT.getTime()) / 1000);
  });
});

describe('reserve, then settle', () => {
  it("ten turns at once under the day's tokens: only as many as their estimates fit are admitted", async () => {
    const { services, state } = gate({ QUOTA_TOKENS_PER_DAY: '2000', QUOTA_TURN_TOKEN_ESTIMATE: '700' });
    const outcomes = await Promise.allSettled(
      Array.from({ length: 10 }, (_, n) => admitTurn(services, alice, turn(n))),
    );
    // 700 + 700 + the 600 left: the third reserves only what remains, the fourth finds nothing left.
    expect(outcomes.filter((outcome) => outcome.status === 'fulfilled')).toHaveLength(3);
    expect(state.reserved(alice.userId, AT).tokens).toBe(2000);
    const refused = await refusal(admitTurn(services, alice, turn(11)));
    expect(refused).toMatchObject({ limit: 'tokens-per-day', allowed: 2000, current: 2000 });
    expect(refused.retryAfterSeconds).toBeLessThanOrEqual(2);
    expect(refused.message).toContain('QUOTA_TOKENS_PER_DAY');
  });

  it('a turn that ended keeps its reservation until its usage is recorded; the next release drops it', async () => {
    const { services, state, usage } = gate({
      QUOTA_TOKENS_PER_DAY: '1000',
      QUOTA_TURN_TOKEN_ESTIMATE: '1000',
    });
    const admission = await admitTurn(services, alice, turn(1));
    expect(admission.holdsSlot).toBe(true);
    await refusal(admitTurn(services, alice, turn(2)));
    // The turn's end: its usage is not recorded yet, so its reservation still counts.
    await releaseTurn(services, { userId: alice.userId, ...turn(1), quotaSlot: true });
    await refusal(admitTurn(services, alice, turn(2)));
    // The worker's release once the turn is over and recorded.
    usage.tokens = 400;
    await releaseTurn(services, { userId: alice.userId, ...turn(1), quotaSlot: true });
    await admitTurn(services, alice, turn(2));
    expect(state.reserved(alice.userId, AT).tokens).toBe(600);
  });

  it("a crashed turn's reservation expires with its lease", async () => {
    const { services } = gate({ QUOTA_TOKENS_PER_DAY: '1000', QUOTA_TURN_LEASE_SECONDS: '60' });
    await admitTurn(services, alice, turn(1));
    await refusal(admitTurn(services, alice, turn(2)));
    const later: QuotaServices = { ...services, now: () => new Date(AT.getTime() + 61_000) };
    await admitTurn(later, alice, turn(2));
  });

  it('reserves the estimate priced against the month; a refused admission changes nothing', async () => {
    const { services, state } = gate({ QUOTA_COST_PER_MONTH: '1', QUOTA_TURN_TOKEN_ESTIMATE: '1000' });
    const priced: QuotaServices = { ...services, priceTokens: (tokens) => tokens * 0.0004 };
    await admitTurn(priced, alice, turn(1));
    await admitTurn(priced, alice, turn(2));
    expect(state.reserved(alice.userId, AT).costUsd).toBeCloseTo(0.8);
    await admitTurn(priced, alice, turn(3));
    const refused = await refusal(admitTurn(priced, alice, turn(4)));
    expect(refused).toMatchObject({ limit: 'cost-per-month', allowed: 1 });
    expect(state.running(alice.userId, AT)).toEqual([]);
  });
});

describe('uploads', () => {
  const upload = (n: number, bytes: number) => ({ documentId: `doc-${n}`, bytes });

  it('reserve their bytes: parallel uploads never hold more than the limit together', async () => {
    const { services, state } = gate({ QUOTA_KNOWLEDGE_BYTES: '1000' });
    const outcomes = await Promise.allSettled(
      Array.from({ length: 10 }, (_, n) =>
        admitUpload(services, alice, upload(n, 300), () => Promise.resolve(new Map())),
      ),
    );
    expect(outcomes.filter((outcome) => outcome.status === 'fulfilled')).toHaveLength(3);
    const refused = await refusal(
      admitUpload(services, alice, upload(11, 300), () => Promise.resolve(new Map())),
    );
    expect(refused).toMatchObject({ limit: 'knowledge-bytes', allowed: 1000, current: 900 });
    // An upload that failed to store gives its bytes back.
    const admitted = outcomes.find((outcome) => outcome.status === 'fulfilled')!;
    await admitted.value.release(false);
    expect(state.reserved(alice.userId, AT).bytes).toBe(600);
  });

  it('count a document stored while its upload still holds its lease once, not twice', async () => {
    const { services } = gate({ QUOTA_KNOWLEDGE_BYTES: '1000' });
    const stored = new Map<string, number>();
    await admitUpload(services, alice, upload(1, 600), () => Promise.resolve(stored));
    stored.set('doc-1', 600);
    await admitUpload(services, alice, upload(2, 400), () => Promise.resolve(stored));
    const refused = await refusal(admitUpload(services, alice, upload(3, 1), () => Promise.resolve(stored)));
    expect(refused).toMatchObject({ limit: 'knowledge-bytes', current: 1000 });
  });

  it("are refused once the day's tokens are spent, and read nothing when every limit is off", async () => {
    const { services, usage } = gate({ QUOTA_TOKENS_PER_DAY: '1000' });
    usage.tokens = 1000;
    expect(
      (await refusal(admitUpload(services, alice, upload(1, 10), () => Promise.resolve(new Map())))).limit,
    ).toBe('tokens-per-day');

    let read = false;
    await admitUpload(gate({}).services, alice, upload(2, 10 ** 9), () => {
      read = true;
      return Promise.resolve(new Map());
    });
    expect(read).toBe(false);
  });
});

describe('exemptions', () => {
  it('exempt users and members of exempt groups pass every limit', async () => {
    const { services, usage } = gate({
      QUOTA_CONCURRENT_TURNS: '1',
      QUOTA_MESSAGES_PER_MINUTE: '1',
      QUOTA_TOKENS_PER_DAY: '1',
      QUOTA_KNOWLEDGE_BYTES: '1',
      QUOTA_EXEMPT: 'user_003,group:operators',
    });
    usage.tokens = 10;
    const operator = { userId: 'user_002', groups: ['readers', 'operators'] };
    expect(isExempt(services.config, operator)).toBe(true);
    for (const caller of [{ userId: 'user_003' }, operator])
      for (const n of [1, 2, 3]) await admitTurn(services, caller, turn(n));
    await admitUpload(services, operator, { documentId: 'd', bytes: 100 }, () =>
      Promise.resolve(new Map([['other', 100]])),
    );
    expect(usage.asked).toEqual([]);
    expect(
      (await refusal(admitTurn(services, { userId: 'user_002', groups: ['readers'] }, turn(4)))).limit,
    ).toBe('tokens-per-day');
  });
});
