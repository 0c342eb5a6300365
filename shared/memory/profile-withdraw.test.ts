// Withdrawing a profile change (its turn left the conversation's path) leaves the facts as they would be without it;
// applying it again restores it.
import { describe, expect, it } from 'vitest';
import { context, decidedAt, earlier, fact, source } from '../../test/support/profile-changes.js';
import type { FactSource, ProfileChange, ProfileFact } from './contracts.js';
import { applyChange, factIdsOf } from './profile-apply.js';
import { withdrawChange } from './profile-withdraw.js';

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
