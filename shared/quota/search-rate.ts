// Searches a user may make per minute (QUOTA_SEARCHES_PER_MINUTE): each search embeds its query, so a search is
// admitted like a message, on the day's and month's spend and a per-minute counter shared by every instance.
import { z } from 'zod';
import { QuotaExceededError } from '../errors.js';
import { defineSettings, intSetting, type SettingValues } from '../settings/setting.js';
import { QUOTA_LIMITS } from './contracts.js';
import { isExempt, minuteStart, type QuotaCaller, type QuotaServices } from './quota-gate.js';

export const searchRateSettings = defineSettings({
  QUOTA_SEARCHES_PER_MINUTE: intSetting({
    default: 0,
    help:
      'Searches (knowledge, memory, and MCP search_conversation_history; each embeds its query) one user may make ' +
      'per UTC clock minute; one more is refused with 429 (a tool error over MCP). 0 = no limit.',
    azure: { kind: 'default' },
  }),
});

export function searchesPerMinute(values: SettingValues<typeof searchRateSettings>): number {
  return values.QUOTA_SEARCHES_PER_MINUTE;
}

/** The per-minute counter of a user's searches (adapter: adapters/cosmos-search-counter.ts). */
export interface SearchCounter {
  /** Counts one search in the window starting at `start` if fewer than `max` are counted there. */
  countSearch(
    userId: string,
    window: { start: Date; seconds: number },
    max: number,
  ): Promise<{ counted: true } | { counted: false; count: number }>;
}

/** The search limit beside the others: the setting and the counter. */
export interface SearchQuota {
  searches: { perMinute: number; counter: SearchCounter };
}

/** One user's searches counted in one UTC minute (id `searches-{epoch seconds of its start}`), in `quotas`. */
export const searchWindowDocumentSchema = z.object({
  id: z.string().regex(/^searches-\d+$/),
  kind: z.literal('quota-search-window'),
  userId: z.string().min(1),
  windowStart: z.iso.datetime(),
  count: z.number().int().nonnegative(),
  ttl: z.number().int().positive(),
});

export type SearchWindowDocument = z.infer<typeof searchWindowDocumentSchema>;

export function searchWindowId(windowStart: Date): string {
  return `searches-${Math.floor(windowStart.getTime() / 1000)}`;
}

/**
 * Admits one search or throws QuotaExceededError (429): the day's tokens or the month's cost already spent, or
 * QUOTA_SEARCHES_PER_MINUTE searches this minute. Nothing is read for an exempt caller.
 */
export async function admitSearch(services: QuotaServices & SearchQuota, caller: QuotaCaller): Promise<void> {
  if (isExempt(services.config, caller)) return;
  const now = services.now?.() ?? new Date();
  await refuseWhenSpent(services, caller.userId, now);
  const { perMinute, counter } = services.searches;
  if (perMinute === 0) return;
  const window = { start: minuteStart(now), seconds: 60 };
  const counted = await counter.countSearch(caller.userId, window, perMinute);
  if (counted.counted) return;
  const retryAfter = secondsUntil(now, window.start.getTime() + 60_000);
  throw new QuotaExceededError(
    `Too many searches this minute (${perMinute} allowed per minute): search again in a moment. ` +
      '(QUOTA_SEARCHES_PER_MINUTE)',
    'searches-per-minute',
    perMinute,
    counted.count,
    retryAfter,
  );
}

/**
 * A search embeds a query of at most a few hundred tokens: it is refused once the day's tokens or the month's
 * dollars are spent, as a new turn is, and reserves nothing (what it uses is recorded as it ends).
 */
async function refuseWhenSpent(services: QuotaServices, userId: string, now: Date): Promise<void> {
  const { tokensPerDay, costPerMonthUsd } = services.config;
  const [tokens, cost] = await Promise.all([
    tokensPerDay > 0 ? services.usage.tokensOnDay(userId, now) : 0,
    costPerMonthUsd > 0 ? services.usage.costInMonth(userId, now) : 0,
  ]);
  if (tokensPerDay > 0 && tokens >= tokensPerDay) {
    const midnight = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1);
    throw new QuotaExceededError(
      `You used ${tokens} tokens today (UTC), the most allowed per day: search again after midnight UTC. ` +
        `(${QUOTA_LIMITS['tokens-per-day']})`,
      'tokens-per-day',
      tokensPerDay,
      tokens,
      secondsUntil(now, midnight),
    );
  }
  if (costPerMonthUsd > 0 && cost >= costPerMonthUsd) {
    const nextMonth = Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1);
    throw new QuotaExceededError(
      `You spent $${cost.toFixed(2)} this month (UTC), the most allowed ($${costPerMonthUsd.toFixed(2)}): ` +
        `search again next month. (${QUOTA_LIMITS['cost-per-month']})`,
      'cost-per-month',
      costPerMonthUsd,
      cost,
      secondsUntil(now, nextMonth),
    );
  }
}

/** Whole seconds until `later`, at least 1 (a retry-after of 0 invites a hot loop). */
function secondsUntil(now: Date, later: number): number {
  return Math.max(1, Math.ceil((later - now.getTime()) / 1000));
}
