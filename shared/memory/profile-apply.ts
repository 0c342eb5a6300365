// Applying a decided profile change, pure: the fact documents it writes, given the stored ones it reads; the same
// documents however often it is applied, so a redelivered turn changes nothing more.
import { createHash } from 'node:crypto';
import type { FactSource, ProfileCategory, ProfileChange, ProfileFact } from './contracts.js';
import { earlier, hasSource, withSource } from './fact-provenance.js';
import { scopeField, type MemoryScope } from '../conversation/memory-scope.js';

export interface ApplyContext {
  userId: string;
  /** The user's message the change came from. */
  source: FactSource;
  /** When the change was decided (its consolidation record's createdAt): the documents' createdAt/updatedAt. */
  decidedAt: string;
  /** Where the facts it creates live (its record's scope); absent, the user's shared memory. */
  scope?: MemoryScope | undefined;
}

/**
 * A new fact's id, chosen when the change is decided: the same for the same turn and position, unique across turns
 * (64 bits of a hash of the turn's keys).
 */
export function newFactId(sessionId: string, chatMessageId: string, n: number): string {
  const hash = createHash('sha256').update(`${sessionId}\u0000${chatMessageId}\u0000${n}`).digest('hex');
  return `fact-${hash.slice(0, 16)}`;
}

/** The facts a change reads before it is applied (the ones it may write). */
export function factIdsOf(change: ProfileChange): string[] {
  return change.op === 'replace' ? [change.factId, change.newFactId] : [change.factId];
}

/**
 * The fact documents to write for a change, given the stored documents of factIdsOf(change) (absent: none
 * stored). Nothing to write when the change is already in them, so applying a change again writes nothing and
 * leaves the same documents; a fact changed since by a later turn (no longer active) is left as that turn made it.
 */
export function applyChange(
  change: ProfileChange,
  stored: ReadonlyMap<string, ProfileFact>,
  context: ApplyContext,
): ProfileFact[] {
  switch (change.op) {
    case 'add': {
      const fact = stored.get(change.factId);
      if (fact === undefined) return [newFact(change.factId, change, context)];
      // Said again by a turn back on the path (its source was withdrawn while the fact stayed, said elsewhere too).
      return hasSource(fact, context.source) ? [] : [restated(fact, context)];
    }
    case 'reaffirm': {
      const fact = stored.get(change.factId);
      if (fact?.status !== 'active' || hasSource(fact, context.source)) return [];
      return [
        { ...fact, provenance: withSource(fact.provenance, context.source), updatedAt: context.decidedAt },
      ];
    }
    case 'replace': {
      const writes: ProfileFact[] = [];
      const old = stored.get(change.factId);
      if (old?.status === 'active')
        writes.push({
          ...old,
          status: 'superseded',
          validUntil: context.source.at,
          supersededBy: change.newFactId,
          changeReason: change.reason,
          updatedAt: context.decidedAt,
        });
      const replacement = stored.get(change.newFactId);
      if (replacement === undefined) writes.push(newFact(change.newFactId, change, context));
      else if (!hasSource(replacement, context.source)) writes.push(restated(replacement, context));
      return writes;
    }
    case 'retract': {
      const fact = stored.get(change.factId);
      if (fact?.status !== 'active') return [];
      return [
        {
          ...fact,
          status: 'retracted',
          validUntil: context.source.at,
          changeReason: change.reason,
          updatedAt: context.decidedAt,
        },
      ];
    }
  }
}

/** A fact its own first statement is given back to: the source again, and validity from it. */
function restated(fact: ProfileFact, context: ApplyContext): ProfileFact {
  return {
    ...fact,
    provenance: withSource(fact.provenance, context.source),
    validFrom: earlier(fact.validFrom, context.source.at),
    updatedAt: context.decidedAt,
  };
}

function newFact(
  id: string,
  what: { category: ProfileCategory; statement: string },
  context: ApplyContext,
): ProfileFact {
  return {
    id,
    kind: 'fact',
    userId: context.userId,
    ...(context.scope === undefined ? {} : scopeField(context.scope)),
    category: what.category,
    statement: what.statement,
    status: 'active',
    validFrom: context.source.at,
    provenance: [context.source],
    createdAt: context.decidedAt,
    updatedAt: context.decidedAt,
  };
}
