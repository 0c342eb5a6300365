// A profile fact's provenance (the user's messages that stated it) and validity dates, as applying and withdrawing
// a change both read and rewrite them.
import type { FactSource, ProfileFact } from './contracts.js';

export const sameMessage = (a: FactSource, b: FactSource) =>
  a.sessionId === b.sessionId && a.messageId === b.messageId;

export function hasSource(fact: ProfileFact, source: FactSource): boolean {
  return fact.provenance.some((known) => sameMessage(known, source));
}

/** Provenance stays oldest first, also when an older turn is consolidated late (replayed from dead letters). */
export function withSource(provenance: readonly FactSource[], source: FactSource): FactSource[] {
  return [...provenance, source].sort((a, b) => a.at.localeCompare(b.at));
}

export function earlier(a: string, b: string): string {
  return Date.parse(a) <= Date.parse(b) ? a : b;
}

export function later(a: string, b: string): string {
  return Date.parse(a) >= Date.parse(b) ? a : b;
}
