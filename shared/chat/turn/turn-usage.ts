// A turn's token usage: the sum over its model rounds, with reasoning and cached tokens only where reported. Pure.
import type { LlmUsage } from '../../llm/llm-gateway.js';

/** The usage of a turn's rounds added up; undefined when no round reported any. */
export function totalUsage(usages: readonly (LlmUsage | undefined)[]): LlmUsage | undefined {
  const known = usages.filter((usage): usage is LlmUsage => usage !== undefined);
  if (known.length === 0) return undefined;
  const sum = (pick: (usage: LlmUsage) => number | undefined) =>
    known.reduce((total, usage) => total + (pick(usage) ?? 0), 0);
  const reasoning = known.some((usage) => usage.reasoningTokens !== undefined);
  const cached = known.some((usage) => usage.cachedPromptTokens !== undefined);
  return {
    promptTokens: sum((usage) => usage.promptTokens),
    completionTokens: sum((usage) => usage.completionTokens),
    totalTokens: sum((usage) => usage.totalTokens),
    ...(reasoning ? { reasoningTokens: sum((usage) => usage.reasoningTokens) } : {}),
    ...(cached ? { cachedPromptTokens: sum((usage) => usage.cachedPromptTokens) } : {}),
  };
}
