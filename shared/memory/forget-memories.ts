// Forgetting: what DELETE .../memories, the MCP tool delete_memory and the history API's DELETE of a conversation
// remove from long-term memory. Every step is idempotent, so a delete that failed half-way is retried whole.
import { mapBounded } from '../bounded-parallel.js';
import type { FactSource, ProfileFact } from './contracts.js';
import type { ConversationSummaries } from './conversation-summaries.js';
import type { ProfileFacts } from './profile-facts.js';

export interface ForgetServices {
  summaries: ConversationSummaries;
  facts: ProfileFacts;
  /** The clock a kept fact's updatedAt is stamped with (default: the system clock). */
  now?: () => Date;
}

/** Facts rewritten or removed at once: a long conversation's facts go quickly without flooding the store. */
const FACT_PARALLELISM = 8;

export interface ForgottenAll {
  /** Fact and consolidation items removed. */
  profileItems: number;
  summaries: number;
}

export interface ForgottenConversation {
  summary: boolean;
  /** Facts that came only from the conversation, removed. */
  factsDeleted: number;
  /** Facts also said elsewhere, kept without the conversation's sources. */
  factsKept: number;
  /** The conversation's consolidation records, removed. */
  consolidations: number;
}

/** Everything the user's long-term memory holds: every summary, every fact and every consolidation record. */
export async function forgetAll(services: ForgetServices, userId: string): Promise<ForgottenAll> {
  const [profileItems, summaries] = await Promise.all([
    services.facts.deleteAll(userId),
    services.summaries.deleteAll(userId),
  ]);
  return { profileItems, summaries };
}

/** One fact, whatever its status; false when the user has no such fact. */
export function forgetFact(services: ForgetServices, userId: string, factId: string): Promise<boolean> {
  return services.facts.delete(userId, factId);
}

/**
 * One conversation's traces: its summary, the records of what its turns changed, the facts that came only from it,
 * and its sources in the facts also said elsewhere. Unknown or already forgotten: nothing to do, not an error (the
 * history API's delete calls it for every conversation, summarised or not).
 */
export async function forgetConversation(
  services: ForgetServices,
  userId: string,
  sessionId: string,
): Promise<ForgottenConversation> {
  const [summary, facts] = await Promise.all([
    services.summaries.delete(userId, sessionId),
    services.facts.fromSession(userId, sessionId),
  ]);
  const now = (services.now?.() ?? new Date()).toISOString();
  const outcomes = await mapBounded(facts, FACT_PARALLELISM, async (fact) => {
    const kept = withoutSession(fact, sessionId, now);
    if (kept === undefined) return (await services.facts.delete(userId, fact.id)) ? 'deleted' : 'gone';
    await services.facts.put(kept);
    return 'kept';
  });
  const factsDeleted = outcomes.filter((outcome) => outcome === 'deleted').length;
  const factsKept = outcomes.filter((outcome) => outcome === 'kept').length;
  // The records go after the facts: a retry after a failure above still finds the facts through fromSession.
  const consolidations = await services.facts.deleteConsolidations(userId, sessionId);
  return { summary, factsDeleted, factsKept, consolidations };
}

/**
 * The fact without the session's sources, or undefined when every source was in it. Nothing of the conversation
 * stays, not even when it taught the fact: validFrom moves to the earliest source that remains when that is later.
 */
export function withoutSession(fact: ProfileFact, sessionId: string, now: string): ProfileFact | undefined {
  const provenance = fact.provenance.filter((source) => source.sessionId !== sessionId);
  const [earliest] = provenance;
  if (earliest === undefined) return undefined;
  if (provenance.length === fact.provenance.length) return fact;
  return {
    ...fact,
    provenance,
    validFrom: later(fact.validFrom, earliestAt(provenance, earliest)),
    updatedAt: now,
  };
}

function earliestAt(sources: readonly FactSource[], first: FactSource): string {
  return sources.reduce((min, source) => (source.at < min ? source.at : min), first.at);
}

function later(a: string, b: string): string {
  return Date.parse(a) >= Date.parse(b) ? a : b;
}
