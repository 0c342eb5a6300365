// Deciding profile changes: only changes quoting the user's own words survive; a repeated fact is reaffirmed, never
// added twice; contradictions supersede or retract; stale ids, duplicates and adds past the profile's size are
// dropped with a reason.
import { describe, expect, it } from 'vitest';
import { fact } from '../../test/support/profile-changes.js';
import { MAX_ACTIVE_FACTS, type ProfileFact } from './contracts.js';
import type { ProposedProfileChanges } from './memory-llm.js';
import { mergeProfileChanges } from './profile-merge.js';

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
