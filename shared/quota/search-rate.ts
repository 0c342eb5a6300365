// Searches a user may make per minute (QUOTA_SEARCHES_PER_MINUTE): each search embeds its query, so a search is
// admitted as a turn is, on the day's and month's spend with what is reserved, and a per-minute counter.
import { z } from 'zod';
import { QuotaExceededError } from '../errors.js';
import { defineSettings, intSetting, type SettingValues } from '../settings/setting.js';
import {
  isExempt,
  minuteStart,
  refuseWhenSpent,
  type QuotaCaller,
  type QuotaServices,
} from './quota-gate.js';

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
 * Admits one search or throws QuotaExceededError (429): the day's tokens or the month's cost spent or held by the
 * reservations of turns and uploads under way, or QUOTA_SEARCHES_PER_MINUTE searches this minute. Nothing is read
 * for an exempt caller.
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

/** Whole seconds until `later`, at least 1 (a retry-after of 0 invites a hot loop). */
function secondsUntil(now: Date, later: number): number {
  return Math.max(1, Math.ceil((later - now.getTime()) / 1000));
}
