import { describe, expect, it } from 'vitest';
import { ConfigError } from '../settings/setting.js';
import { testConfig } from '../../test/support/in-memory-ports.js';
import { DEFAULT_PRICES, costOf, priceOf } from './prices.js';

describe('the price table', () => {
  it('prices a dated snapshot as its base model, the longest name first, ignoring case', () => {
    const table = { 'gpt-5': { input: 1 }, 'gpt-5.4-mini': { input: 2 } };
    expect(priceOf(table, 'GPT-5.4-mini-2026-03-17')).toEqual({ input: 2 });
    expect(priceOf(table, 'gpt-5-2025-08-07')).toEqual({ input: 1 });
    expect(priceOf(table, 'gpt-5.4')).toBeUndefined();
  });

  it('bills cached input and reasoning at their own prices, as parts of input and output', () => {
    const cost = costOf(DEFAULT_PRICES, 'gpt-5.4-mini', {
      promptTokens: 1_000_000,
      cachedPromptTokens: 400_000,
      completionTokens: 200_000,
      reasoningTokens: 50_000,
      totalTokens: 1_200_000,
    });
    // 600k fresh × 0.75 + 400k cached × 0.075 + 150k × 4.5 + 50k reasoning × 4.5, per million.
    expect(cost).toEqual({ usd: 1.38, model: 'gpt-5.4-mini', priced: true });
  });

  it('counts a model without a price at 0 dollars, and says so', () => {
    expect(
      costOf(DEFAULT_PRICES, 'llama3', { promptTokens: 5, completionTokens: 5, totalTokens: 10 }),
    ).toEqual({
      usd: 0,
      model: 'llama3',
      priced: false,
    });
  });

  it('merges LLM_PRICES over the defaults, and stops start-up on a malformed table naming the problem', () => {
    const { prices } = testConfig({ LLM_PRICES: '{"my-model":{"input":0.5,"output":2}}' }).usage;
    expect(prices['my-model']).toEqual({ input: 0.5, output: 2 });
    expect(prices['text-embedding-3-small']).toEqual(DEFAULT_PRICES['text-embedding-3-small']);
    expect(() => testConfig({ LLM_PRICES: '{my-model' })).toThrow(/LLM_PRICES: must be JSON/);
    expect(() => testConfig({ LLM_PRICES: '{"m":{"input":-1}}' })).toThrow(ConfigError);
    expect(() => testConfig({ LLM_PRICES: '{"m":{"input":1,"ouput":2}}' })).toThrow(
      /LLM_PRICES: is not a price table at m/,
    );
  });
});
