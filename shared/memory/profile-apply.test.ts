// Applying a decided profile change writes the same documents however often it is applied: a redelivered turn
// changes nothing more.
import { describe, expect, it } from 'vitest';
import { context, decidedAt, earlier, fact, source, userId } from '../../test/support/profile-changes.js';
import type { ProfileChange, ProfileFact } from './contracts.js';
import { applyChange, factIdsOf } from './profile-apply.js';

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
