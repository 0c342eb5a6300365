// Reading what providers stream as loosely typed JSON, shared by both stream assemblers: `null` and values of the
// wrong type mean absent, and a usage object is read the same way under either API's field names.
import type { LlmUsage } from './llm-gateway.js';

/** Where one API puts the counts of a usage object. */
export interface UsageFields {
  input: string;
  output: string;
  inputDetails: string;
  outputDetails: string;
  /** Where some servers put reasoning tokens when the output details lack them. */
  reasoningFallback?: string;
}

export function readUsage(value: unknown, fields: UsageFields): LlmUsage | undefined {
  if (!isRecord(value)) return undefined;
  const promptTokens = numberOr(value[fields.input], 0);
  const completionTokens = numberOr(value[fields.output], 0);
  const usage: LlmUsage = {
    promptTokens,
    completionTokens,
    totalTokens: numberOr(value['total_tokens'], promptTokens + completionTokens),
  };
  const outputDetails = value[fields.outputDetails];
  const reasoningTokens =
    (isRecord(outputDetails) ? outputDetails['reasoning_tokens'] : undefined) ??
    (fields.reasoningFallback === undefined ? undefined : value[fields.reasoningFallback]);
  if (typeof reasoningTokens === 'number') usage.reasoningTokens = reasoningTokens;
  const inputDetails = value[fields.inputDetails];
  if (isRecord(inputDetails) && typeof inputDetails['cached_tokens'] === 'number')
    usage.cachedPromptTokens = inputDetails['cached_tokens'];
  return usage;
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function nonEmptyString(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}

function numberOr(value: unknown, fallback: number): number {
  return typeof value === 'number' && Number.isFinite(value) ? value : fallback;
}
