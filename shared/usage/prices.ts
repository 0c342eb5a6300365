// The price table (LLM_PRICES): US dollars per million tokens of each model, and what one call's tokens cost. Pure.
import { z } from 'zod';
import type { LlmUsage } from '../llm/llm-gateway.js';

const perMillion = z.number().min(0).max(100_000);

/** Absent cachedInput: cached input costs `input`; absent reasoning: reasoning tokens cost `output`. */
export const modelPriceSchema = z.strictObject({
  input: perMillion,
  cachedInput: perMillion.optional(),
  output: perMillion.optional(),
  reasoning: perMillion.optional(),
});
export type ModelPrice = z.infer<typeof modelPriceSchema>;

export const priceTableSchema = z.record(z.string().min(1).max(200), modelPriceSchema);
export type PriceTable = z.infer<typeof priceTableSchema>;

/**
 * The default models' list prices (OpenAI's standard tier, which Azure OpenAI's Global Standard deployments match),
 * as found on 2026-11-26 at https://openai.com/api/pricing/ and
 * https://azure.microsoft.com/pricing/details/cognitive-services/openai-service/; reasoning tokens bill as output.
 */
export const DEFAULT_PRICES: PriceTable = {
  'gpt-5.4-mini': { input: 0.75, cachedInput: 0.075, output: 4.5, reasoning: 4.5 },
  'gpt-5-mini': { input: 0.25, cachedInput: 0.025, output: 2, reasoning: 2 },
  'text-embedding-3-small': { input: 0.02 },
};

/** A call's tokens as they are billed: cached input is part of input, reasoning part of output. */
export interface CallTokens {
  inputTokens: number;
  cachedInputTokens: number;
  outputTokens: number;
  reasoningTokens: number;
}

export function callTokens(usage: LlmUsage): CallTokens {
  return {
    inputTokens: usage.promptTokens,
    cachedInputTokens: usage.cachedPromptTokens ?? 0,
    outputTokens: usage.completionTokens,
    reasoningTokens: usage.reasoningTokens ?? 0,
  };
}

/**
 * The table's price of a model: its exact name, else the longest name of the table the model's name starts with,
 * then a `-` (a dated snapshot such as `gpt-5.4-mini-2026-03-17` is priced as `gpt-5.4-mini`). Case is ignored.
 */
export function priceOf(table: PriceTable, model: string): ModelPrice | undefined {
  const name = model.toLowerCase();
  let best: { key: string; price: ModelPrice } | undefined;
  for (const [key, price] of Object.entries(table)) {
    const lower = key.toLowerCase();
    if (lower === name) return price;
    if (name.startsWith(`${lower}-`) && (best === undefined || lower.length > best.key.length))
      best = { key: lower, price };
  }
  return best?.price;
}

/** US dollars, kept to a nano-dollar so sums of many calls do not drift in the last digits. */
export function costUsd(tokens: CallTokens, price: ModelPrice): number {
  const cached = Math.min(tokens.cachedInputTokens, tokens.inputTokens);
  const reasoning = Math.min(tokens.reasoningTokens, tokens.outputTokens);
  const output = price.output ?? 0;
  const dollars =
    ((tokens.inputTokens - cached) * price.input +
      cached * (price.cachedInput ?? price.input) +
      (tokens.outputTokens - reasoning) * output +
      reasoning * (price.reasoning ?? output)) /
    1_000_000;
  return roundUsd(dollars);
}

export function roundUsd(dollars: number): number {
  return Math.round(dollars * 1e9) / 1e9;
}

/** What a call or a turn cost: `priced` is false when the table has no price for the model (its cost is then 0). */
export interface LlmCost {
  usd: number;
  model: string;
  priced: boolean;
}

export function costOf(table: PriceTable, model: string, usage: LlmUsage): LlmCost {
  const price = priceOf(table, model);
  return { usd: price ? costUsd(callTokens(usage), price) : 0, model, priced: price !== undefined };
}
