// Deciding a turn's profile changes, pure: which of the model's proposals survive (each guarded by a verbatim quote
// of the user's own message, checked against the active facts, deduplicated, held to the profile's size). Applying
// them is profile-apply.ts; taking them back when their turn leaves the conversation's path, profile-withdraw.ts.
import { MAX_ACTIVE_FACTS, type ProfileCategory, type ProfileChange, type ProfileFact } from './contracts.js';
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
