// Profile merging, pure: which of the model's proposed changes a turn makes to the user's profile (each guarded by a
// verbatim quote of the user's own message, checked against the active facts, deduplicated, held to the profile's
// size), the fact documents each decided change writes — the same ones however often it is applied — and those
// that take it back when its turn leaves the conversation's path (an edit or regenerate branched before it).
import {
  MAX_ACTIVE_FACTS,
  type FactSource,
  type ProfileCategory,
  type ProfileChange,
  type ProfileFact,
} from './contracts.js';
import type { ProposedProfileChanges } from './memory-llm.js';

/** An evidence quote with fewer letters and digits than this proves nothing: "I" is in every message. */
export const MIN_EVIDENCE_CHARS = 3;

export type ProposalKind = keyof ProposedProfileChanges;

export type DropReason =
  /** Its evidence is not a quote of the user's message: the model took it from elsewhere, or made it up. */
  | 'evidence-not-in-user-text'
  /** It names a fact that is not active in the profile (unknown, or changed since). */
  | 'unknown-fact'
  /** The answer already changes that fact (a fact is changed once per turn). */
  | 'fact-already-changed'
  /** It says again what another change of the same answer says. */
  | 'duplicate'
  /** The profile holds MAX_ACTIVE_FACTS active facts. */
  | 'profile-full';

export interface DroppedChange {
  kind: ProposalKind;
  reason: DropReason;
  /** The proposal's statement or fact id, for the log. */
  subject: string;
}

export interface MergedChanges {
  changes: ProfileChange[];
  dropped: DroppedChange[];
}

export interface MergeInput {
  /** The profile's facts now; only the active ones count. */
  active: readonly ProfileFact[];
  /** Everything the user wrote in the turn: the only text evidence may quote. */
  userText: string;
  proposed: ProposedProfileChanges;
  /** The id of the n-th new fact (0, 1, ...) the changes create. */
  newFactId: (n: number) => string;
}

/**
 * The changes to make, in the order they are decided: contradictions (replace, retract) first, so a fact being
 * replaced is not also reaffirmed; then reaffirmations; then additions, each becoming a reaffirmation when an active
 * fact of its category already says it.
 */
export function mergeProfileChanges(input: MergeInput): MergedChanges {
  const userText = normalEvidence(input.userText);
  const active = new Map(
    input.active.filter((fact) => fact.status === 'active').map((fact) => [fact.id, fact] as const),
  );
  const byStatement = new Map<string, ProfileFact>();
  for (const fact of active.values()) byStatement.set(statementKey(fact.category, fact.statement), fact);

  const changes: ProfileChange[] = [];
  const dropped: DroppedChange[] = [];
  /** Facts this answer already changes (replaced, retracted or reaffirmed). */
  const touched = new Set<string>();
  /** Statements this answer already introduces. */
  const introduced = new Set<string>();
  const reaffirmed = new Set<string>();
  let created = 0;
  let activeAfter = active.size;

  const quoted = (kind: ProposalKind, subject: string, evidence: string) => {
    const quote = normalEvidence(evidence, true);
    const ok = evidenceChars(quote) >= MIN_EVIDENCE_CHARS && userText.includes(quote);
    if (!ok) dropped.push({ kind, reason: 'evidence-not-in-user-text', subject });
    return ok;
  };
  const target = (kind: ProposalKind, factId: string): ProfileFact | undefined => {
    const fact = active.get(factId);
    if (fact === undefined) dropped.push({ kind, reason: 'unknown-fact', subject: factId });
    else if (touched.has(factId))
      dropped.push({
        kind,
        reason: kind === 'reaffirm' && reaffirmed.has(factId) ? 'duplicate' : 'fact-already-changed',
        subject: factId,
      });
    else return fact;
    return undefined;
  };
  const reaffirm = (fact: ProfileFact) => {
    touched.add(fact.id);
    reaffirmed.add(fact.id);
    changes.push({ op: 'reaffirm', factId: fact.id });
  };
  const retract = (fact: ProfileFact, reason: string) => {
    touched.add(fact.id);
    activeAfter -= 1;
    changes.push({ op: 'retract', factId: fact.id, reason: reason.trim() });
  };

  for (const proposal of input.proposed.retract) {
    if (!quoted('retract', proposal.factId, proposal.evidence)) continue;
    const fact = target('retract', proposal.factId);
    if (fact) retract(fact, proposal.reason);
  }

  for (const proposal of input.proposed.replace) {
    if (!quoted('replace', proposal.statement, proposal.evidence)) continue;
    const fact = target('replace', proposal.factId);
    if (fact === undefined) continue;
    const statement = proposal.statement.trim();
    const key = statementKey(proposal.category, statement);
    const existing = byStatement.get(key);
    if (existing?.id === fact.id) {
      // "Replaced" by what it already says: the user said it again.
      reaffirm(fact);
    } else if (existing !== undefined || introduced.has(key)) {
      // The new value is already in the profile (or this answer adds it): the old fact goes, the other stays.
      retract(fact, proposal.reason);
      if (existing !== undefined && !touched.has(existing.id)) reaffirm(existing);
    } else {
      touched.add(fact.id);
      introduced.add(key);
      changes.push({
        op: 'replace',
        factId: fact.id,
        newFactId: input.newFactId(created++),
        category: proposal.category,
        statement,
        reason: proposal.reason.trim(),
      });
    }
  }

  for (const proposal of input.proposed.reaffirm) {
    if (!quoted('reaffirm', proposal.factId, proposal.evidence)) continue;
    const fact = target('reaffirm', proposal.factId);
    if (fact) reaffirm(fact);
  }

  for (const proposal of input.proposed.add) {
    const statement = proposal.statement.trim();
    if (!quoted('add', statement, proposal.evidence)) continue;
    const key = statementKey(proposal.category, statement);
    const existing = byStatement.get(key);
    if (existing !== undefined) {
      // Repeating a fact never duplicates it: the message joins the fact's provenance.
      if (touched.has(existing.id)) dropped.push({ kind: 'add', reason: 'duplicate', subject: statement });
      else reaffirm(existing);
      continue;
    }
    if (introduced.has(key)) {
      dropped.push({ kind: 'add', reason: 'duplicate', subject: statement });
      continue;
    }
    if (activeAfter >= MAX_ACTIVE_FACTS) {
      dropped.push({ kind: 'add', reason: 'profile-full', subject: statement });
      continue;
    }
    introduced.add(key);
    activeAfter += 1;
    changes.push({ op: 'add', factId: input.newFactId(created++), category: proposal.category, statement });
  }

  return { changes, dropped };
}

// --- Applying a decided change ---------------------------------------------------------------------------

export interface ApplyContext {
  userId: string;
  /** The user's message the change came from. */
  source: FactSource;
  /** When the change was decided (its consolidation record's createdAt): the documents' createdAt/updatedAt. */
  decidedAt: string;
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

// --- Withdrawing an applied change -----------------------------------------------------------------------------

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

function earlier(a: string, b: string): string {
  return Date.parse(a) <= Date.parse(b) ? a : b;
}

function later(a: string, b: string): string {
  return Date.parse(a) >= Date.parse(b) ? a : b;
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
    category: what.category,
    statement: what.statement,
    status: 'active',
    validFrom: context.source.at,
    provenance: [context.source],
    createdAt: context.decidedAt,
    updatedAt: context.decidedAt,
  };
}

const sameMessage = (a: FactSource, b: FactSource) =>
  a.sessionId === b.sessionId && a.messageId === b.messageId;

function hasSource(fact: ProfileFact, source: FactSource): boolean {
  return fact.provenance.some((known) => sameMessage(known, source));
}

/** Provenance stays oldest first, also when an older turn is consolidated late (replayed from dead letters). */
function withSource(provenance: readonly FactSource[], source: FactSource): FactSource[] {
  return [...provenance, source].sort((a, b) => a.at.localeCompare(b.at));
}

// --- Normalisation ----------------------------------------------------------------------------------------

/** Case, width, typographic quotes and runs of whitespace do not make a quote differ. */
function normalText(text: string): string {
  return text
    .normalize('NFKC')
    .toLowerCase()
    .replace(/[\u2018\u2019\u201b\u2032]/g, "'")
    .replace(/[\u201c\u201d\u201f\u2033]/g, '"')
    .replace(/\s+/g, ' ')
    .trim();
}

/** A quote as compared with the user's text; `trimEnds` drops the quote marks and punctuation models wrap it in. */
function normalEvidence(text: string, trimEnds = false): string {
  const normal = normalText(text);
  return trimEnds ? normal.replace(/^[\s"'«».,;:!?…-]+|[\s"'«».,;:!?…-]+$/gu, '') : normal;
}

const evidenceChars = (quote: string) => (quote.match(/[\p{L}\p{N}]/gu) ?? []).length;

/** Two statements of a category say the same when they differ only in case, spacing and final punctuation. */
function statementKey(category: ProfileCategory, statement: string): string {
  return `${category}\u0000${normalText(statement).replace(/[\s.!;]+$/u, '')}`;
}
