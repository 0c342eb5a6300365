// A consolidation record's changes on the stored facts: applied (profile-apply.ts) when its turn is
// consolidated or comes back onto its conversation's path, withdrawn (profile-withdraw.ts) when the path leaves
// it. Each change reads the facts it may write and writes what the pure function says, on the versions read.
import type { ConsolidationRecord, ProfileChange, ProfileFact } from './contracts.js';
import { FACT_WRITE_ATTEMPTS, type ProfileFacts, type StoredFact } from './profile-facts.js';
import { applyChange, factIdsOf } from './profile-apply.js';
import { withdrawChange } from './profile-withdraw.js';

/**
 * Applies every change of the record. Another conversation's turn (consolidated at the same time: the worker orders
 * turns per conversation only) or a forget may change the same fact in between, and an unconditional write would
 * drop its provenance entry or make a fact it superseded active again. On a conflict the change is read and
 * computed again; applyChange writes nothing of what is already in, so the end state is the one of applying the two
 * in some order. The changes of one record touch distinct facts.
 */
export async function applyRecord(facts: ProfileFacts, record: ConsolidationRecord): Promise<void> {
  const context = {
    userId: record.userId,
    source: record.source,
    decidedAt: record.createdAt,
    scope: record.scope,
  };
  await Promise.all(
    record.changes.map((change) =>
      onVersions(facts, record, change, 'applying', (stored) => ({
        write: applyChange(change, stored, context),
        remove: [],
      })),
    ),
  );
}

/** Takes back every change of the record, as withdrawChange says, under the same guard against other writers. */
export async function withdrawRecord(
  facts: ProfileFacts,
  record: ConsolidationRecord,
  at: string,
): Promise<void> {
  const context = { source: record.source, at };
  await Promise.all(
    record.changes.map((change) =>
      onVersions(facts, record, change, 'withdrawing', (stored) => withdrawChange(change, stored, context)),
    ),
  );
}

/** Reads the change's facts, writes and removes what `decide` says on the versions read; again on a conflict. */
async function onVersions(
  facts: ProfileFacts,
  record: ConsolidationRecord,
  change: ProfileChange,
  doing: string,
  decide: (stored: ReadonlyMap<string, ProfileFact>) => { write: ProfileFact[]; remove: ProfileFact[] },
): Promise<void> {
  for (let attempt = 1; attempt <= FACT_WRITE_ATTEMPTS; attempt++) {
    const read = await Promise.all(factIdsOf(change).map((id) => facts.get(record.userId, id)));
    const found = read.filter((item): item is StoredFact => item !== undefined);
    const stored = new Map(found.map(({ fact }) => [fact.id, fact] as const));
    const versions = new Map(found.map(({ fact, version }) => [fact.id, version] as const));
    const { write, remove } = decide(stored);
    // A fact not read is created only if still absent; one read is replaced or removed only if still at that version.
    const outcomes = await Promise.all([
      ...write.map(async (fact) => (await facts.put(fact, versions.get(fact.id))) === 'written'),
      ...remove.map((fact) => facts.delete(record.userId, fact.id, versions.get(fact.id))),
    ]);
    if (outcomes.every(Boolean)) return;
  }
  throw new Error(
    `Profile fact ${change.factId} of user ${record.userId} changed under ${FACT_WRITE_ATTEMPTS} writes in a ` +
      `row while ${doing} ${record.id}; the event will be delivered again.`,
  );
}
