// Forgetting: what DELETE .../memories, the MCP tool delete_memory and the history API's DELETE of a conversation
// remove from long-term memory, for good: nothing a conversation's branches bring back states it again. Every step
// is idempotent, so a delete that failed half-way is retried whole.
import { mapBounded } from '../bounded-parallel.js';
import type { FactSource, ProfileFact } from './contracts.js';
import type { ConversationSummaries } from './conversation-summaries.js';
import { FACT_WRITE_ATTEMPTS, type ProfileFacts } from './profile-facts.js';
import { withoutFact } from './profile-withdraw.js';

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

/**
 * One fact, whatever its status; false when the user has no such fact. First it leaves the consolidation records
 * that would state it again (a conversation's branch coming back applies its turns' records again), so a retry after
 * a failure still finds them; then the fact goes.
 */
export async function forgetFact(services: ForgetServices, userId: string, factId: string): Promise<boolean> {
  const records = await services.facts.consolidationsChanging(userId, factId);
  await mapBounded(records, FACT_PARALLELISM, (record) =>
    services.facts.setChanges(userId, record.id, withoutFact(record.changes, factId)),
  );
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
  const outcomes = await mapBounded(facts, FACT_PARALLELISM, (fact) =>
    forgetSessionIn(services.facts, userId, fact.id, sessionId, now),
  );
  const factsDeleted = outcomes.filter((outcome) => outcome === 'deleted').length;
  const factsKept = outcomes.filter((outcome) => outcome === 'kept').length;
  // The records go after the facts: a retry after a failure above still finds the facts through fromSession.
  const consolidations = await services.facts.deleteConsolidations(userId, sessionId);
  return { summary, factsDeleted, factsKept, consolidations };
}

/**
 * One fact without the session's sources, written on the version read: the memory worker may add another
 * conversation's source to it at the same moment (the user said it again there), and an unconditional rewrite or
 * delete would drop that source, or the whole fact. On a conflict the fact is read and decided again, so the end
 * state is the one of the two in some order. A fact the worker has not yet reaffirmed when it is deleted stays
 * deleted: the worker's conditional write then finds it gone and writes nothing, as if it had come after.
 */
async function forgetSessionIn(
  facts: ProfileFacts,
  userId: string,
  factId: string,
  sessionId: string,
  now: string,
): Promise<'deleted' | 'kept' | 'gone'> {
  for (let attempt = 1; attempt <= FACT_WRITE_ATTEMPTS; attempt++) {
    const stored = await facts.get(userId, factId);
    if (stored === undefined) return 'gone';
    const kept = withoutSession(stored.fact, sessionId, now);
    if (kept === undefined) {
      if (await facts.delete(userId, factId, stored.version)) return 'deleted';
    } else if (kept === stored.fact) {
      // The session's sources are gone already (another forget of it came first): nothing left to do.
      return 'gone';
    } else if ((await facts.put(kept, stored.version)) === 'written') return 'kept';
  }
  throw new Error(
    `Profile fact ${factId} of user ${userId} changed under ${FACT_WRITE_ATTEMPTS} writes in a row while ` +
      `forgetting session ${sessionId}; forgetting it again finishes the job.`,
  );
}

/**
 * The fact without the session's sources, or undefined when every source was in it. Nothing of the conversation
 * stays, not even when it taught the fact: validFrom moves to the earliest source that remains when that is later.
 */
function withoutSession(fact: ProfileFact, sessionId: string, now: string): ProfileFact | undefined {
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
