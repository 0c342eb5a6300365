// Profile merging: only changes quoting the user's own words survive; a repeated fact is reaffirmed, never added
// twice; contradictions supersede or retract; stale ids, duplicates and adds past the profile's size are dropped
// with a reason; each decided change writes the same documents however often it is applied; and withdrawing a change
// (its turn left the conversation's path) leaves the facts as they would be without it, applying it again restores it.
import { describe, expect, it } from 'vitest';
import { MAX_ACTIVE_FACTS, type FactSource, type ProfileChange, type ProfileFact } from './contracts.js';
import type { ProposedProfileChanges } from './memory-llm.js';
import {
  applyChange,
  factIdsOf,
  mergeProfileChanges,
  withdrawChange,
  type ApplyContext,
} from './profile-merge.js';

const userId = 'user_001';
const earlier: FactSource = {
  sessionId: 's0',
  chatMessageId: 'c0',
  messageId: 'c0_user',
  at: '2026-11-01T09:00:00.000Z',
};
const source: FactSource = {
  sessionId: 's1',
  chatMessageId: 'c1',
  messageId: 'c1_user',
  at: '2026-11-22T10:00:00.000Z',
};
const decidedAt = '2026-11-22T10:00:05.000Z';
const context: ApplyContext = { userId, source, decidedAt };

function fact(id: string, statement: string, extra: Partial<ProfileFact> = {}): ProfileFact {
  return {
    id,
    kind: 'fact',
    userId,
    category: 'interests',
    statement,
    status: 'active',
    validFrom: earlier.at,
    provenance: [earlier],
    createdAt: earlier.at,
    updatedAt: earlier.at,
    ...extra,
  };
}

const none: ProposedProfileChanges = { add: [], reaffirm: [], replace: [], retract: [] };
const merge = (proposed: Partial<ProposedProfileChanges>, userText: string, active: ProfileFact[] = []) =>
  mergeProfileChanges({ active, userText, proposed: { ...none, ...proposed }, newFactId: (n) => `new-${n}` });

describe('mergeProfileChanges', () => {
  it('keeps an add whose evidence quotes the user, ignoring case, spacing, quote marks and end punctuation', () => {
    const merged = merge(
      {
        add: [
          {
            category: 'interests',
            statement: ' The user loves hiking. ',
            evidence: '"i  LOVE hiking in the ALPS."',
          },
          { category: 'work_profile', statement: 'The user is a nurse.', evidence: 'I’m a nurse' },
        ],
      },
      "I love hiking in the Alps!\nAlso, I'm a nurse at St. Mary's.",
    );
    expect(merged).toEqual({
      changes: [
        { op: 'add', factId: 'new-0', category: 'interests', statement: 'The user loves hiking.' },
        { op: 'add', factId: 'new-1', category: 'work_profile', statement: 'The user is a nurse.' },
      ],
      dropped: [],
    });
  });

  it('drops every change whose evidence is not in the user text: a tool result never becomes a fact', () => {
    const active = [fact('f1', 'The user likes cats.')];
    const merged = merge(
      {
        add: [
          { category: 'interests', statement: 'The user loves spiders.', evidence: 'the user loves spiders' },
          { category: 'interests', statement: 'The user likes tea.', evidence: 'I' },
          { category: 'interests', statement: 'The user likes tea.', evidence: '  ' },
        ],
        reaffirm: [{ factId: 'f1', evidence: 'I adore cats' }],
        replace: [
          {
            factId: 'f1',
            category: 'interests',
            statement: 'The user likes dogs.',
            evidence: 'I prefer dogs now',
            reason: 'r',
          },
        ],
        retract: [{ factId: 'f1', evidence: 'no more cats', reason: 'r' }],
      },
      'I asked about spiders: what did the search find?',
      active,
    );
    expect(merged.changes).toEqual([]);
    expect(merged.dropped.map((d) => [d.kind, d.reason])).toEqual([
      ['retract', 'evidence-not-in-user-text'],
      ['replace', 'evidence-not-in-user-text'],
      ['reaffirm', 'evidence-not-in-user-text'],
      ['add', 'evidence-not-in-user-text'],
      ['add', 'evidence-not-in-user-text'],
      ['add', 'evidence-not-in-user-text'],
    ]);
  });

  it('turns an add of what an active fact says into a reaffirmation, and collapses repeated adds', () => {
    const active = [
      fact('f1', 'The user likes cats.'),
      fact('f2', 'The user likes jazz.', { category: 'dislikes' }),
    ];
    const text = 'I like cats. I like cats a lot. I like jazz.';
    const merged = merge(
      {
        add: [
          { category: 'interests', statement: 'the user likes cats', evidence: 'I like cats' },
          { category: 'interests', statement: 'The user likes cats.', evidence: 'I like cats a lot' },
          { category: 'interests', statement: 'The user likes jazz.', evidence: 'I like jazz' },
          { category: 'interests', statement: 'The user likes jazz!', evidence: 'I like jazz' },
        ],
        reaffirm: [{ factId: 'f1', evidence: 'I like cats' }],
      },
      text,
      active,
    );
    // f2 says the same words in another category: a new fact of this one.
    expect(merged.changes).toEqual([
      { op: 'reaffirm', factId: 'f1' },
      { op: 'add', factId: 'new-0', category: 'interests', statement: 'The user likes jazz.' },
    ]);
    expect(merged.dropped.map((d) => [d.kind, d.reason])).toEqual([
      ['add', 'duplicate'],
      ['add', 'duplicate'],
      ['add', 'duplicate'],
    ]);
  });

  it('replaces or retracts a contradicted fact once, dropping stale ids and later changes to it', () => {
    const active = [
      fact('f1', 'The user lives in Lyon.', { category: 'personal_preferences' }),
      fact('f2', 'The user is vegetarian.', { category: 'personal_preferences' }),
      fact('old', 'The user works at Contoso.', { category: 'work_profile', status: 'superseded' }),
    ];
    const text = 'I moved to Paris last month. I eat meat again.';
    const merged = merge(
      {
        replace: [
          {
            factId: 'f1',
            category: 'personal_preferences',
            statement: 'The user lives in Paris.',
            evidence: 'I moved to Paris',
            reason: 'The user moved.',
          },
          {
            factId: 'old',
            category: 'work_profile',
            statement: 'The user works in Paris.',
            evidence: 'I moved to Paris',
            reason: 'x',
          },
        ],
        retract: [
          { factId: 'f2', evidence: 'I eat meat again', reason: ' The user eats meat again. ' },
          { factId: 'gone', evidence: 'I eat meat again', reason: 'x' },
        ],
        reaffirm: [{ factId: 'f1', evidence: 'I moved to Paris' }],
      },
      text,
      active,
    );
    expect(merged.changes).toEqual([
      { op: 'retract', factId: 'f2', reason: 'The user eats meat again.' },
      {
        op: 'replace',
        factId: 'f1',
        newFactId: 'new-0',
        category: 'personal_preferences',
        statement: 'The user lives in Paris.',
        reason: 'The user moved.',
      },
    ]);
    expect(merged.dropped).toEqual([
      { kind: 'retract', reason: 'unknown-fact', subject: 'gone' },
      { kind: 'replace', reason: 'unknown-fact', subject: 'old' },
      { kind: 'reaffirm', reason: 'fact-already-changed', subject: 'f1' },
    ]);
  });

  it('a replace by what the fact already says is a reaffirmation; by another active fact, a retraction', () => {
    const active = [
      fact('f1', 'The user likes tea.'),
      fact('f2', 'The user likes coffee.'),
      fact('f3', 'The user likes mate.'),
    ];
    const text = 'Tea, yes. Coffee is what I like now.';
    const merged = merge(
      {
        replace: [
          {
            factId: 'f1',
            category: 'interests',
            statement: 'The user likes tea',
            evidence: 'Tea, yes',
            reason: 'r',
          },
          {
            factId: 'f3',
            category: 'interests',
            statement: 'The user likes coffee.',
            evidence: 'Coffee is what I like now',
            reason: 'Coffee now.',
          },
        ],
      },
      text,
      active,
    );
    expect(merged.changes).toEqual([
      { op: 'reaffirm', factId: 'f1' },
      { op: 'retract', factId: 'f3', reason: 'Coffee now.' },
      { op: 'reaffirm', factId: 'f2' },
    ]);
  });

  it(`adds no more than the profile holds (${MAX_ACTIVE_FACTS} active facts), counting retractions`, () => {
    const active = Array.from({ length: MAX_ACTIVE_FACTS }, (_, i) =>
      fact(`f${i}`, `The user likes thing ${i}.`),
    );
    const merged = merge(
      {
        add: [
          { category: 'goals', statement: 'The user wants to run a marathon.', evidence: 'run a marathon' },
          { category: 'goals', statement: 'The user wants to learn Greek.', evidence: 'learn Greek' },
        ],
        retract: [{ factId: 'f0', evidence: 'not thing 0', reason: 'r' }],
      },
      'I want to run a marathon and learn Greek; not thing 0 any more.',
      active,
    );
    expect(merged.changes.map((c) => c.op)).toEqual(['retract', 'add']);
    expect(merged.dropped).toEqual([
      { kind: 'add', reason: 'profile-full', subject: 'The user wants to learn Greek.' },
    ]);
  });
});

describe('applyChange', () => {
  /** Applies the change to a store of facts until it writes nothing more; returns the store and each write. */
  function applyTwice(change: ProfileChange, facts: ProfileFact[]) {
    const store = new Map(facts.map((f) => [f.id, f] as const));
    const rounds: ProfileFact[][] = [];
    for (let i = 0; i < 2; i++) {
      const stored = new Map(
        factIdsOf(change).flatMap((id) => (store.has(id) ? [[id, store.get(id)!] as const] : [])),
      );
      const writes = applyChange(change, stored, context);
      for (const write of writes) store.set(write.id, write);
      rounds.push(writes);
    }
    return { store, rounds };
  }

  it('add: a new active fact valid from the message, with it as provenance; again: nothing', () => {
    const { store, rounds } = applyTwice(
      { op: 'add', factId: 'n1', category: 'goals', statement: 'The user wants to learn Greek.' },
      [],
    );
    expect(store.get('n1')).toEqual({
      id: 'n1',
      kind: 'fact',
      userId,
      category: 'goals',
      statement: 'The user wants to learn Greek.',
      status: 'active',
      validFrom: source.at,
      provenance: [source],
      createdAt: decidedAt,
      updatedAt: decidedAt,
    });
    expect(rounds[1]).toEqual([]);
  });

  it('reaffirm: the message joins the provenance once; a fact no longer active is left alone', () => {
    const { store, rounds } = applyTwice({ op: 'reaffirm', factId: 'f1' }, [
      fact('f1', 'The user likes cats.'),
    ]);
    expect(store.get('f1')).toMatchObject({
      status: 'active',
      provenance: [earlier, source],
      updatedAt: decidedAt,
    });
    expect(rounds.map((r) => r.length)).toEqual([1, 0]);

    const retracted = fact('f2', 'x', { status: 'retracted' });
    expect(applyTwice({ op: 'reaffirm', factId: 'f2' }, [retracted]).rounds).toEqual([[], []]);
    // Provenance stays oldest first when an older message is consolidated late.
    const later = fact('f3', 'y', {
      provenance: [{ ...earlier, messageId: 'c9_user', at: '2026-12-01T00:00:00.000Z' }],
    });
    expect(
      applyTwice({ op: 'reaffirm', factId: 'f3' }, [later])
        .store.get('f3')
        ?.provenance.map((p) => p.at),
    ).toEqual([source.at, '2026-12-01T00:00:00.000Z']);
  });

  it('replace: the old fact superseded with when, by what and why; the new one active; again: nothing', () => {
    const change: ProfileChange = {
      op: 'replace',
      factId: 'f1',
      newFactId: 'n1',
      category: 'personal_preferences',
      statement: 'The user lives in Paris.',
      reason: 'The user moved.',
    };
    const { store, rounds } = applyTwice(change, [fact('f1', 'The user lives in Lyon.')]);
    expect(store.get('f1')).toMatchObject({
      status: 'superseded',
      validFrom: earlier.at,
      validUntil: source.at,
      supersededBy: 'n1',
      changeReason: 'The user moved.',
      provenance: [earlier],
    });
    expect(store.get('n1')).toMatchObject({
      status: 'active',
      statement: 'The user lives in Paris.',
      validFrom: source.at,
      provenance: [source],
    });
    expect(rounds.map((r) => r.length)).toEqual([2, 0]);
    // The old fact deleted meanwhile (forgotten): the new one is still what the user said.
    expect(applyTwice(change, []).store.get('n1')).toMatchObject({ status: 'active' });
  });

  it('retract: the fact retracted with when and why; again, or when no longer active: nothing', () => {
    const { store, rounds } = applyTwice({ op: 'retract', factId: 'f1', reason: 'No longer true.' }, [
      fact('f1', 'The user is vegetarian.'),
    ]);
    expect(store.get('f1')).toMatchObject({
      status: 'retracted',
      validUntil: source.at,
      changeReason: 'No longer true.',
      updatedAt: decidedAt,
    });
    expect(rounds.map((r) => r.length)).toEqual([1, 0]);
    expect(applyTwice({ op: 'retract', factId: 'missing', reason: 'r' }, []).rounds).toEqual([[], []]);
  });
});

describe('withdrawChange', () => {
  const at = '2026-11-23T08:00:00.000Z';
  const other: FactSource = {
    ...earlier,
    sessionId: 's2',
    messageId: 'c2_user',
    at: '2026-11-10T09:00:00.000Z',
  };
  /** Applies the change, then withdraws it twice; returns the store after each step. */
  function roundTrip(change: ProfileChange, facts: ProfileFact[]) {
    const store = new Map(facts.map((f) => [f.id, f] as const));
    const read = () =>
      new Map(factIdsOf(change).flatMap((id) => (store.has(id) ? [[id, store.get(id)!] as const] : [])));
    for (const write of applyChange(change, read(), context)) store.set(write.id, write);
    const applied = new Map(store);
    const rounds = [0, 1].map(() => {
      const { write, remove } = withdrawChange(change, read(), { source, at });
      for (const fact of write) store.set(fact.id, fact);
      for (const fact of remove) store.delete(fact.id);
      return write.length + remove.length;
    });
    return { applied, store, rounds };
  }

  it('add: the fact the turn alone stated goes; again: nothing', () => {
    const { applied, store, rounds } = roundTrip(
      { op: 'add', factId: 'n1', category: 'goals', statement: 'The user wants to learn Greek.' },
      [],
    );
    expect(applied.has('n1')).toBe(true);
    expect(store.size).toBe(0);
    expect(rounds).toEqual([1, 0]);
  });

  it('add, reaffirm: a fact also said elsewhere stays with its other sources, valid from the earliest of them', () => {
    // The fact the turn added, said again later in another conversation.
    const added = fact('n1', 'The user wants to learn Greek.', {
      validFrom: source.at,
      provenance: [source, { ...other, at: '2026-11-25T09:00:00.000Z' }],
    });
    const { store } = roundTrip({ op: 'add', factId: 'n1', category: 'goals', statement: added.statement }, [
      added,
    ]);
    expect(store.get('n1')).toMatchObject({
      status: 'active',
      validFrom: '2026-11-25T09:00:00.000Z',
      provenance: [{ ...other, at: '2026-11-25T09:00:00.000Z' }],
      updatedAt: at,
    });
    const reaffirmed = roundTrip({ op: 'reaffirm', factId: 'f1' }, [fact('f1', 'The user likes cats.')]);
    expect(reaffirmed.applied.get('f1')?.provenance).toEqual([earlier, source]);
    expect(reaffirmed.store.get('f1')).toMatchObject({
      status: 'active',
      provenance: [earlier],
      validFrom: earlier.at,
    });
    expect(reaffirmed.rounds).toEqual([1, 0]);
  });

  const move: ProfileChange = {
    op: 'replace',
    factId: 'f1',
    newFactId: 'n1',
    category: 'personal_preferences',
    statement: 'The user lives in Paris.',
    reason: 'The user moved.',
  };

  it('replace: the new fact goes and the old one is active again, as it was', () => {
    const lyon = fact('f1', 'The user lives in Lyon.');
    const { applied, store, rounds } = roundTrip(move, [lyon]);
    expect(applied.get('f1')?.status).toBe('superseded');
    expect(store.has('n1')).toBe(false);
    expect(store.get('f1')).toEqual({ ...lyon, updatedAt: at });
    expect(rounds).toEqual([2, 0]);
  });

  it('replace: the old fact takes the place of a new one ended since, and stays when the new one is said elsewhere', () => {
    const lyon = fact('f1', 'The user lives in Lyon.', {
      status: 'superseded',
      validUntil: source.at,
      supersededBy: 'n1',
      changeReason: 'The user moved.',
    });
    // Paris was replaced by Rome afterwards: Lyon ends where Paris ended.
    const paris = fact('n1', 'The user lives in Paris.', {
      status: 'superseded',
      validFrom: source.at,
      provenance: [source],
      validUntil: '2026-12-01T00:00:00.000Z',
      supersededBy: 'n2',
      changeReason: 'Moved again.',
    });
    const spliced = withdrawChange(
      move,
      new Map([
        ['f1', lyon],
        ['n1', paris],
      ]),
      { source, at },
    );
    expect(spliced.remove).toEqual([paris]);
    expect(spliced.write).toEqual([
      {
        ...lyon,
        validUntil: '2026-12-01T00:00:00.000Z',
        supersededBy: 'n2',
        changeReason: 'Moved again.',
        updatedAt: at,
      },
    ]);
    // Paris said in another conversation too: it stays without this source, Lyon stays replaced by it.
    const saidTwice = { ...paris, status: 'active' as const, provenance: [source, other] };
    const kept = withdrawChange(
      move,
      new Map([
        ['f1', lyon],
        ['n1', saidTwice],
      ]),
      { source, at },
    );
    expect(kept.remove).toEqual([]);
    expect(kept.write).toEqual([{ ...saidTwice, provenance: [other], validFrom: source.at, updatedAt: at }]);
  });

  it('retract: the fact is active again only while this turn is what ended it', () => {
    const vegetarian = fact('f1', 'The user is vegetarian.');
    const { store, rounds } = roundTrip({ op: 'retract', factId: 'f1', reason: 'No longer true.' }, [
      vegetarian,
    ]);
    expect(store.get('f1')).toEqual({ ...vegetarian, updatedAt: at });
    expect(rounds).toEqual([1, 0]);
    const endedElsewhere = fact('f1', 'x', {
      status: 'retracted',
      validUntil: other.at,
      changeReason: 'No longer true.',
    });
    expect(
      withdrawChange(
        { op: 'retract', factId: 'f1', reason: 'No longer true.' },
        new Map([['f1', endedElsewhere]]),
        {
          source,
          at,
        },
      ),
    ).toEqual({ write: [], remove: [] });
  });

  it('applying again after a withdrawal gives the turn its source back, also on a fact that stayed', () => {
    const added = fact('n1', 'The user wants to learn Greek.', { validFrom: other.at, provenance: [other] });
    const back = applyChange(
      { op: 'add', factId: 'n1', category: 'goals', statement: added.statement },
      new Map([['n1', added]]),
      {
        ...context,
        source: earlier,
      },
    );
    expect(back).toEqual([
      { ...added, provenance: [earlier, other], validFrom: earlier.at, updatedAt: decidedAt },
    ]);
  });
});
