// Which properties a container's indexing policy indexes, and which ones a query filters or sorts on: a container
// that indexes only what its queries use (ContainerSpec.indexedPaths) is checked against those queries. Pure.
import type { ContainerSpec } from './container-spec.js';

/** Cosmos DB indexes these system properties whatever the policy says (consistent indexing). */
const ALWAYS_INDEXED = new Set(['/id', '/_ts']);

/** The included and excluded paths of the container's indexing policy (`_etag`, excluded by infra, left out). */
export function indexingPaths(spec: ContainerSpec): { included: string[]; excluded: string[] } {
  const vectors = (spec.vectorEmbeddings ?? []).map((vector) => `${vector.path}/*`);
  const unindexed = (spec.unindexedPaths ?? []).map((path) => `${path}/?`);
  if (spec.indexedPaths === undefined) return { included: ['/*'], excluded: [...vectors, ...unindexed] };
  return {
    included: spec.indexedPaths.map((path) => `${path}/?`),
    excluded: [...vectors, ...unindexed, '/*'],
  };
}

/**
 * Whether a scalar property (`/sessionId`, `/a/b`) is in the container's index: the most precise of the policy's
 * paths that covers it decides, as Cosmos DB resolves a conflict between an included and an excluded path.
 */
export function isIndexed(spec: ContainerSpec, property: string): boolean {
  if (ALWAYS_INDEXED.has(property)) return true;
  const { included, excluded } = indexingPaths(spec);
  const covering = (paths: string[]) =>
    paths.filter((path) => covers(path, property)).map((path) => path.length);
  const bestIncluded = Math.max(-1, ...covering(included));
  const bestExcluded = Math.max(-1, ...covering(excluded));
  return bestIncluded > bestExcluded;
}

function covers(policyPath: string, property: string): boolean {
  if (policyPath.endsWith('/?')) return policyPath.slice(0, -2) === property;
  const tree = policyPath.slice(0, -2); // `/a/*` → `/a`, `/*` → ''
  return property === tree || property.startsWith(`${tree}/`);
}

/**
 * The properties a query's WHERE and ORDER BY clauses read (`c.sessionId` → `/sessionId`), for queries written as
 * this codebase writes them: one alias `c`, property access with dots.
 */
export function filteredProperties(query: string): string[] {
  const where = /\bWHERE\b([\s\S]*)$/i.exec(query)?.[1] ?? '';
  const orderBy = /\bORDER\s+BY\b([\s\S]*)$/i.exec(query)?.[1] ?? '';
  const paths = new Set<string>();
  for (const match of `${where} ${orderBy}`.matchAll(/\bc((?:\.[A-Za-z_][A-Za-z0-9_]*)+)/g))
    paths.add(match[1]!.replaceAll('.', '/'));
  return [...paths];
}
