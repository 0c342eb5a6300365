// Per-user quotas composed over the app's database: one object for the front door, the turn's end, the workers and
// searches. Each reads the limits as they are now; the daily token and monthly dollar limits read the usage
// counters every recorded model call raises.
import type { Database } from '@azure/cosmos';
import { createCosmosQuotaState } from '../quota/adapters/cosmos-quota-state.js';
import { createCosmosSearchCounter } from '../quota/adapters/cosmos-search-counter.js';
import { QUOTAS_CONTAINER } from '../quota/contracts.js';
import type { QuotaServices } from '../quota/quota-gate.js';
import type { SearchQuota } from '../quota/search-rate.js';
import type { AppConfig } from './config.js';
import type { UsageAccounting } from './usage-accounting.js';

export function composeQuota(
  config: Pick<AppConfig, 'quota' | 'searchesPerMinute'>,
  database: Database,
  usage: Pick<UsageAccounting, 'reader' | 'pricing'>,
): QuotaServices & SearchQuota {
  const quotas = database.container(QUOTAS_CONTAINER);
  return {
    config: config.quota,
    state: createCosmosQuotaState(quotas),
    usage: usage.reader,
    searches: { perMinute: config.searchesPerMinute, counter: createCosmosSearchCounter(quotas) },
    // A reservation's dollars: its tokens at the chat model's output price, the dearest it may be billed at.
    priceTokens: (tokens) =>
      usage.pricing({ promptTokens: 0, completionTokens: tokens, totalTokens: tokens }, undefined).usd,
  };
}
