// Settings of cost accounting: the price table (LLM_PRICES) and whether model calls are recorded at all
// (USAGE_ACCOUNTING, off only to measure what accounting adds).
import { z } from 'zod';
import {
  choiceSetting,
  defineSettings,
  parseJsonSetting,
  type SettingRow,
  type SettingValues,
} from '../settings/setting.js';
import { DEFAULT_PRICES, priceTableSchema, type PriceTable } from './prices.js';

const EXAMPLE = '{"my-model":{"input":0.5,"cachedInput":0.05,"output":2,"reasoning":2}}';

/** JSON text → the table merged over the defaults; a malformed table names its first problem. */
const pricesSchema: z.ZodType<PriceTable, string | undefined> = z
  .string()
  .optional()
  .transform((text, context) => {
    if (text === undefined) return DEFAULT_PRICES;
    const prices = parseJsonSetting(text, priceTableSchema, context, {
      what: 'a price table',
      hint:
        'per model: US dollars per million "input", "cachedInput", "output" and "reasoning" tokens, numbers ≥ 0; ' +
        `e.g. ${EXAMPLE}`,
      example: EXAMPLE,
    });
    if (prices === undefined) return z.NEVER;
    return { ...DEFAULT_PRICES, ...prices };
  });

const pricesRow: SettingRow<PriceTable> = {
  help:
    'Prices of the models, as JSON: per model name, US dollars per million "input", "cachedInput", "output" and ' +
    '"reasoning" tokens (embedding models: "input"). Merged over the defaults (gpt-5.4-mini, gpt-5-mini, ' +
    "text-embedding-3-small at list prices); a dated model name takes its base name's price.",
  sample: '',
  applies: 'app',
  azure: { kind: 'default' },
  defaultText: undefined,
  schema: pricesSchema,
};

export const usageSettings = defineSettings({
  LLM_PRICES: pricesRow,
  USAGE_ACCOUNTING: choiceSetting(['on', 'off'], {
    default: 'on',
    help:
      "Records every model call with its tokens and cost (the usage API, message-end's cost, quotas by tokens and " +
      'cost). "off" only to measure what accounting adds: nothing is recorded then.',
    azure: { kind: 'default' },
  }),
});

export interface UsageConfig {
  prices: PriceTable;
  accounting: boolean;
}

export function usageConfig(values: SettingValues<typeof usageSettings>): UsageConfig {
  return { prices: values.LLM_PRICES, accounting: values.USAGE_ACCOUNTING === 'on' };
}
