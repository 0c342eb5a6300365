// The knowledge-base sources of a turn, from its stored tool results: what its `sources` events carry and its
// answer keeps. Every round's finds count, each chunk once, in the order found (round, then call, then rank), so
// a list sent again after a crash, or built again at the commit, is the same. Pure.
import { MAX_TURN_SOURCES, type KnowledgeSource } from '../../conversation/sources.js';
import type { ToolResultRecord } from '../contracts/documents.js';

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

/**
 * Whether the calls of the given round added to the turn's sources: then the round after it streams them first.
 * Not when they found only chunks already listed, nor when the list was full (MAX_TURN_SOURCES) before them.
 */
export function sourcesGrewIn(results: readonly SourcedResult[], round: number): boolean {
  const before = turnSources(results.filter((result) => result.round < round));
  return turnSources(results.filter((result) => result.round <= round)).length > before.length;
}
