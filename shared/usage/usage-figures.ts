// Adding up usage figures: a record's parts, a part's contribution, the sum of two, and the background spend kept
// apart. Pure.
import {
  NO_USAGE,
  type UsageFigures,
  type UsageKind,
  type UsagePart,
  type UsageRecord,
} from './contracts.js';
import { roundUsd } from './prices.js';

export function partFigures(part: UsagePart): UsageFigures {
  return {
    calls: part.calls,
    inputTokens: part.inputTokens,
    cachedInputTokens: part.cachedInputTokens,
    outputTokens: part.outputTokens,
    reasoningTokens: part.reasoningTokens,
    costUsd: part.costUsd,
  };
}

/** Every part of every job a record holds. */
export function partsOf(record: UsageRecord): UsagePart[] {
  return Object.values(record.jobs).flat();
}

/** What some parts add to the chat's own rounds and to the background. */
export function sidesOf(parts: readonly UsagePart[]): { turns: UsageFigures; background: UsageFigures } {
  let turns = NO_USAGE;
  let background = NO_USAGE;
  for (const part of parts)
    if (isBackground(part.kind)) background = addFigures(background, partFigures(part));
    else turns = addFigures(turns, partFigures(part));
  return { turns, background };
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
