// Adding up usage figures: a record's contribution, the sum of two, and the background spend kept apart. Pure.
import { NO_USAGE, type UsageFigures, type UsageKind, type UsageRecord } from './contracts.js';
import { roundUsd } from './prices.js';

export function recordFigures(record: UsageRecord): UsageFigures {
  return {
    calls: 1,
    inputTokens: record.inputTokens,
    cachedInputTokens: record.cachedInputTokens,
    outputTokens: record.outputTokens,
    reasoningTokens: record.reasoningTokens,
    costUsd: record.costUsd,
  };
}

export function addFigures(a: UsageFigures, b: UsageFigures): UsageFigures {
  return {
    calls: a.calls + b.calls,
    inputTokens: a.inputTokens + b.inputTokens,
    cachedInputTokens: a.cachedInputTokens + b.cachedInputTokens,
    outputTokens: a.outputTokens + b.outputTokens,
    reasoningTokens: a.reasoningTokens + b.reasoningTokens,
    costUsd: roundUsd(a.costUsd + b.costUsd),
  };
}

export function sumFigures(all: readonly UsageFigures[]): UsageFigures {
  return all.reduce(addFigures, NO_USAGE);
}

/** The chat's own rounds are `turns`; everything else a user never sees is background. */
export function isBackground(kind: UsageKind): boolean {
  return kind !== 'turn';
}
