// The search gate on its own, with an in-memory counter and a fixed usage reader: spend refusals with their retry
// time, the per-minute count, and an exempt caller who is never read nor counted.
import { describe, expect, it } from 'vitest';
import { MemoryQuotaState } from '../../test/support/in-memory-quota.js';
import { MemorySearchCounter } from '../../test/support/in-memory-search-counter.js';
import { QuotaExceededError } from '../errors.js';
import { readSettings, SettingProblems, settingsOf } from '../settings/setting.js';
import type { QuotaServices } from './quota-gate.js';
import { admitSearch, type SearchQuota } from './search-rate.js';
import { quotaConfig, quotaSettings } from './settings.js';

const AT = new Date('2026-11-26T10:15:20.000Z');
const reserveNothing = { tokens: 0, costUsd: 0, bytes: 0 };

function gate(env: Record<string, string>, used: { tokens?: number; cost?: number }, perMinute = 0) {
  const problems = new SettingProblems(settingsOf(quotaSettings));
  const values = readSettings(quotaSettings, env, problems);
  problems.throwIfAny();
  let reads = 0;
  const services: QuotaServices & SearchQuota = {
    config: quotaConfig(values),
    state: new MemoryQuotaState(),
    usage: {
      tokensOnDay: () => ((reads += 1), Promise.resolve(used.tokens ?? 0)),
      costInMonth: () => ((reads += 1), Promise.resolve(used.cost ?? 0)),
    },
    searches: { perMinute, counter: new MemorySearchCounter() },
    now: () => AT,
  };
  return { services, reads: () => reads };
}

async function refusal(promise: Promise<void>): Promise<QuotaExceededError> {
  const error = await promise.then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(QuotaExceededError);
  return error as QuotaExceededError;
}

describe('admitSearch', () => {
  it("refuses once the day's tokens are spent, until midnight UTC", async () => {
    const { services } = gate({ QUOTA_TOKENS_PER_DAY: '100' }, { tokens: 100 });
    const error = await refusal(admitSearch(services, { userId: 'user_001' }));
    expect(error).toMatchObject({ limit: 'tokens-per-day', allowed: 100, current: 100 });
    expect(error.retryAfterSeconds).toBe(13 * 3600 + 44 * 60 + 40);
    await expect(
      admitSearch(gate({ QUOTA_TOKENS_PER_DAY: '100' }, { tokens: 99 }).services, { userId: 'user_001' }),
    ).resolves.toBeUndefined();
  });

  it("refuses once the month's dollars are spent, until the month ends", async () => {
    const { services } = gate({ QUOTA_COST_PER_MONTH: '5' }, { cost: 5.2 });
    const error = await refusal(admitSearch(services, { userId: 'user_001' }));
    expect(error).toMatchObject({ limit: 'cost-per-month', allowed: 5, current: 5.2 });
    expect(error.message).toMatch(/\$5\.20 this month/);
  });

  it('refuses while the reservations of turns under way hold the rest of the day, and admits once they settle', async () => {
    const { services } = gate({ QUOTA_TOKENS_PER_DAY: '1000' }, { tokens: 400 });
    const state = services.state as MemoryQuotaState;
    const lease = { userId: 'user_001', max: 0, leaseSeconds: 900, now: AT };
    const reserve = (tokens: number) => ({ tokens, costUsd: 0, bytes: 0 });
    await state.takeTurnSlot({ ...lease, turn: 's/1', reserve: reserve(300) });
    await expect(admitSearch(services, { userId: 'user_001' })).resolves.toBeUndefined();

    await state.takeTurnSlot({ ...lease, turn: 's/2', reserve: reserve(300) });
    const error = await refusal(admitSearch(services, { userId: 'user_001' }));
    // Used 400 and reserved 600: a reservation settles as its turn ends, so the retry is soon, not at midnight.
    expect(error).toMatchObject({ limit: 'tokens-per-day', allowed: 1000, current: 1000 });
    expect(error.retryAfterSeconds).toBeLessThanOrEqual(2);
    expect(error.message).toMatch(/answers under way hold the rest .*: search again once one has ended/);
    // Another user's reservations are not this one's.
    await expect(admitSearch(services, { userId: 'user_002' })).resolves.toBeUndefined();

    await state.releaseTurnSlot('user_001', 's/2');
    await expect(admitSearch(services, { userId: 'user_001' })).resolves.toBeUndefined();
  });

  it('reads no lease when no spend limit is set', async () => {
    const { services } = gate({}, {}, 0);
    let leaseReads = 0;
    services.state.openReservations = () => ((leaseReads += 1), Promise.resolve(reserveNothing));
    await admitSearch(services, { userId: 'user_001' });
    expect(leaseReads).toBe(0);
  });

  it('counts searches per UTC minute and refuses one more, until the minute ends', async () => {
    const { services } = gate({}, {}, 2);
    await admitSearch(services, { userId: 'user_001' });
    await admitSearch(services, { userId: 'user_001' });
    const error = await refusal(admitSearch(services, { userId: 'user_001' }));
    expect(error).toMatchObject({
      limit: 'searches-per-minute',
      allowed: 2,
      current: 2,
      retryAfterSeconds: 40,
    });
    await expect(admitSearch(services, { userId: 'user_002' })).resolves.toBeUndefined();
  });

  it('neither reads nor counts for an exempt caller', async () => {
    const { services, reads } = gate(
      { QUOTA_TOKENS_PER_DAY: '1', QUOTA_EXEMPT: 'group:ops' },
      { tokens: 10 },
      1,
    );
    for (let i = 0; i < 3; i += 1) await admitSearch(services, { userId: 'user_001', groups: ['ops'] });
    expect(reads()).toBe(0);
  });
});
