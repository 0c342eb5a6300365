// Long-term memory as the memory worker leaves it, for tests that read or forget it: a conversation's summary
// document, a profile fact with its sources (and a way to store new ones), and a turn's consolidation record, each
// valid by the contracts.
import {
  consolidationId,
  type ConsolidationRecord,
  type ConversationSummaryDocument,
  type FactSource,
  type ProfileFact,
} from '../../shared/memory/contracts.js';
import type { ProfileFacts } from '../../shared/memory/profile-facts.js';

/** A moment on a day of November 2026, as ISO text. */
export const onDay = (day: number, hour = 10) => new Date(Date.UTC(2026, 10, day, hour)).toISOString();

/** The user's message of a turn in a session, said on `day`. */
export function factSource(sessionId: string, day: number, chatMessageId = `turn-${day}`): FactSource {
  return { sessionId, chatMessageId, messageId: `${chatMessageId}_user`, at: onDay(day) };
}

export function profileFact(
  userId: string,
  id: string,
  provenance: FactSource[],
  overrides: Partial<ProfileFact> = {},
): ProfileFact {
  const first = provenance[0]?.at ?? onDay(1);
  return {
    id,
    kind: 'fact',
    userId,
    category: 'interests',
    statement: `Statement ${id}.`,
    status: 'active',
    validFrom: first,
    provenance,
    createdAt: first,
    updatedAt: provenance.at(-1)?.at ?? first,
    ...overrides,
  };
}

/** Stores new facts, as the memory worker creates them; one already stored is a mistake of the test, not a skip. */
export async function storeFacts(store: Pick<ProfileFacts, 'put'>, ...facts: ProfileFact[]): Promise<void> {
  for (const fact of facts)
    if ((await store.put(fact, undefined)) !== 'written')
      throw new Error(`Fact ${fact.id} of ${fact.userId} is already stored.`);
}

export function summaryDocument(
  userId: string,
  sessionId: string,
  overrides: Partial<ConversationSummaryDocument> = {},
): ConversationSummaryDocument {
  return {
    id: sessionId,
    kind: 'conversation-summary',
    userId,
    sessionId,
    summary: `A conversation ${sessionId}.`,
    themes: ['travel'],
    persons: [],
    places: ['Lisbon'],
    user_sentiment: 'positive',
    timestamp: onDay(3),
    vector_embedding: [1, 0, 0],
    coveredThrough: 1,
    exchanges: 1,
    createdAt: onDay(3),
    ...overrides,
  };
}

export function consolidationRecord(
  userId: string,
  sessionId: string,
  chatMessageId: string,
): ConsolidationRecord {
  return {
    id: consolidationId(sessionId, chatMessageId),
    kind: 'consolidation',
    userId,
    sessionId,
    chatMessageId,
    source: factSource(sessionId, 1, chatMessageId),
    changes: [],
    createdAt: onDay(1),
    appliedAt: onDay(1),
  };
}
