// The knowledge-base sources of a turn, from its stored tool results: what its `sources` events carry and its
// answer keeps. Every round's finds count, each chunk once, in the order found (round, then call, then rank), so
// a list sent again after a crash, or built again at the commit, is the same. Pure.
import { MAX_TURN_SOURCES, type KnowledgeSource } from '../knowledge/contracts.js';
import type { ToolResultRecord } from './contracts.js';

type SourcedResult = Pick<ToolResultRecord, 'round' | 'index' | 'sources'>;

/** The turn's sources so far: deduplicated by chunk (its first find kept), at most MAX_TURN_SOURCES. */
export function turnSources(results: readonly SourcedResult[]): KnowledgeSource[] {
  const ordered = [...results].sort((a, b) => a.round - b.round || a.index - b.index);
  const seen = new Set<string>();
  const sources: KnowledgeSource[] = [];
  for (const result of ordered)
    for (const source of result.sources ?? []) {
      if (seen.has(source.chunkId)) continue;
      seen.add(source.chunkId);
      sources.push(source);
      if (sources.length === MAX_TURN_SOURCES) return sources;
    }
  return sources;
}

/** Whether a call of the given round found any: then the round after it streams the turn's sources first. */
export function foundSourcesIn(results: readonly SourcedResult[], round: number): boolean {
  return results.some((result) => result.round === round && (result.sources?.length ?? 0) > 0);
}
