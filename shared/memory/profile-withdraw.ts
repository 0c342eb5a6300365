// Withdrawing an applied profile change, pure: what takes it back when its turn leaves the conversation's path (an
// edit or regenerate branched before it), and what a forgotten fact leaves of a record's changes.
import type { FactSource, ProfileChange, ProfileFact } from './contracts.js';
import { hasSource, later, sameMessage } from './fact-provenance.js';

export interface WithdrawContext {
  /** The user's message the change came from: its source is what is taken back. */
  source: FactSource;
  /** When it is withdrawn: the updatedAt of the facts it rewrites. */
  at: string;
}

/** What withdrawing a change writes (on the versions read) and deletes. */
export interface Withdrawal {
  write: ProfileFact[];
  remove: ProfileFact[];
}

/**
 * What takes a change back, given the stored documents of factIdsOf(change): the turn's source leaves every fact it
 * is in, a fact left without sources goes, and a fact the change ended is as it would be without it. Nothing when it
 * is out already, so withdrawing again writes nothing. Withdrawn newest turn first, a path's changes leave the
 * profile as if the turns had not been said (facts of other conversations keep their own sources):
 * - add, reaffirm: the source leaves the fact; a fact only the turn stated goes;
 * - replace F by G: the source leaves G; when G goes, F takes G's place in F → G → ...: active again if G was
 *   still active (the user's earlier value holds again), else ended as G was (superseded by G's successor, or
 *   retracted), so a later statement still stands;
 * - retract F: F is active again, if it is still retracted by this turn (when and why match what the turn wrote).
 */
export function withdrawChange(
  change: ProfileChange,
  stored: ReadonlyMap<string, ProfileFact>,
  context: WithdrawContext,
): Withdrawal {
  const write: ProfileFact[] = [];
  const remove: ProfileFact[] = [];
  /** The fact without the turn's source; undefined when nothing of it is left, the same fact when it had none. */
  const without = (fact: ProfileFact): ProfileFact | undefined => {
    if (!hasSource(fact, context.source)) return fact;
    const provenance = fact.provenance.filter((known) => !sameMessage(known, context.source));
    const [first] = provenance;
    if (first === undefined) return undefined;
    const earliest = provenance.reduce((min, known) => (known.at < min ? known.at : min), first.at);
    return { ...fact, provenance, validFrom: later(fact.validFrom, earliest), updatedAt: context.at };
  };
  const drop = (fact: ProfileFact) => {
    const kept = without(fact);
    if (kept === undefined) remove.push(fact);
    else if (kept !== fact) write.push(kept);
    return kept;
  };
  switch (change.op) {
    case 'add':
    case 'reaffirm': {
      const fact = stored.get(change.factId);
      if (fact) drop(fact);
      break;
    }
    case 'replace': {
      const replacement = stored.get(change.newFactId);
      const kept = replacement && drop(replacement);
      const old = stored.get(change.factId);
      // G stays when said elsewhere too: F stays replaced by it. G gone (now, or already): F takes its place.
      if (kept === undefined && old?.status === 'superseded' && old.supersededBy === change.newFactId)
        write.push(inPlaceOf(old, replacement, context.at));
      break;
    }
    case 'retract': {
      const fact = stored.get(change.factId);
      if (
        fact?.status === 'retracted' &&
        fact.validUntil === context.source.at &&
        fact.changeReason === change.reason
      )
        write.push(reopened(fact, context.at));
      break;
    }
  }
  return { write, remove };
}

/**
 * A record's changes once the user has forgotten a fact: none of them may state it again when its turn comes back
 * onto the conversation's path. Adding or reaffirming it goes; a replacement by it stays a retraction of the fact it
 * replaced (that one still ended then); a change that only ended it stays (it ends nothing that is not there).
 */
export function withoutFact(changes: readonly ProfileChange[], factId: string): ProfileChange[] {
  return changes.flatMap((change): ProfileChange[] => {
    if ((change.op === 'add' || change.op === 'reaffirm') && change.factId === factId) return [];
    if (change.op === 'replace' && change.newFactId === factId)
      return [{ op: 'retract', factId: change.factId, reason: change.reason }];
    return [change];
  });
}

/** F where G (which replaced it and goes) was: G's end, or active when G had none (or is gone already). */
function inPlaceOf(old: ProfileFact, gone: ProfileFact | undefined, at: string): ProfileFact {
  if (gone === undefined || gone.status === 'active') return reopened(old, at);
  const { supersededBy: _supersededBy, ...rest } = old;
  return {
    ...rest,
    status: gone.status,
    ...(gone.validUntil === undefined ? {} : { validUntil: gone.validUntil }),
    ...(gone.supersededBy === undefined ? {} : { supersededBy: gone.supersededBy }),
    ...(gone.changeReason === undefined ? {} : { changeReason: gone.changeReason }),
    updatedAt: at,
  };
}

/** The fact active again: its end taken back. */
function reopened(fact: ProfileFact, at: string): ProfileFact {
  const { validUntil: _validUntil, supersededBy: _supersededBy, changeReason: _changeReason, ...rest } = fact;
  return { ...rest, status: 'active', updatedAt: at };
}
