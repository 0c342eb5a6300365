// The personalised system prompt: the template rendered with the profile's facts under their headings, the base
// prompt alone when there are none, and the budgeted profile read that gives up (with a reason) rather than hold
// the turn.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { MemoryProfileFacts } from '../../test/support/in-memory-memory.js';
import { storeFacts } from '../../test/support/memory-fixtures.js';
import { PROFILE_FETCH_BUDGET_MS, type ProfileFact } from './contracts.js';
import {
  conversationSystemPrompt,
  fetchProfileWithin,
  PROFILE_HEADINGS,
  renderProfile,
} from './personalised-prompt.js';
import type { ProfileFacts } from './profile-facts.js';

const BASE = 'You are a helpful assistant.';
const AT = '2026-11-21T10:00:00.000Z';

function fact(id: string, overrides: Partial<ProfileFact> = {}): ProfileFact {
  return {
    id,
    kind: 'fact',
    userId: 'user_001',
    category: 'interests',
    statement: `Statement ${id}.`,
    status: 'active',
    validFrom: AT,
    provenance: [{ sessionId: 's1', chatMessageId: 'c1', messageId: 'c1_user', at: AT }],
    createdAt: AT,
    updatedAt: AT,
    ...overrides,
  };
}

class Warnings {
  readonly lines: string[] = [];
  warn = (...args: unknown[]) => void this.lines.push(args.map(String).join(' '));
}

describe('conversationSystemPrompt', () => {
  it("renders the base prompt, the user's facts under their headings in the categories' order, and the recall hint", () => {
    const prompt = conversationSystemPrompt(
      BASE,
      [
        fact('a', { category: 'goals', statement: 'Wants to sail to the Azores next summer.' }),
        fact('b', { category: 'output_preferences', statement: 'Prefers  answers\nas bullet points.' }),
        fact('c', { category: 'interests', statement: 'Loves sailing.' }),
      ],
      AT,
    );
    expect(prompt).toMatchObject({ personalised: true, createdAt: AT });
    const text = prompt.content;
    expect(text.startsWith(`${BASE}\n\n`)).toBe(true);
    const order = [
      `## ${PROFILE_HEADINGS.output_preferences}\n- Prefers answers as bullet points.`,
      `## ${PROFILE_HEADINGS.interests}\n- Loves sailing.`,
      `## ${PROFILE_HEADINGS.goals}\n- Wants to sail to the Azores next summer.`,
    ].map((section) => text.indexOf(section));
    expect(order.every((at) => at > 0)).toBe(true);
    expect([...order].sort((a, b) => a - b)).toEqual(order);
    expect(text).toMatch(/preferences, interests, knowledge and communication style/);
    expect(text).toMatch(/call search_conversation_history/);
    expect(text).not.toMatch(/\{\{/);
  });

  it('is the base prompt as it is when there is no fact, or the profile did not answer', () => {
    expect(conversationSystemPrompt(BASE, [], AT)).toEqual({
      content: BASE,
      personalised: false,
      createdAt: AT,
    });
    expect(conversationSystemPrompt(BASE, undefined, AT)).toEqual({
      content: BASE,
      personalised: false,
      createdAt: AT,
    });
  });

  it("leaves a placeholder or a dollar pattern inside a fact's text as the user wrote it", () => {
    const { content } = conversationSystemPrompt(
      BASE,
      [fact('a', { statement: 'Writes {{base}} and $& in templates.' })],
      AT,
    );
    expect(content).toContain('- Writes {{base}} and $& in templates.');
    expect(content.split(BASE)).toHaveLength(2);
  });
});

describe('renderProfile', () => {
  it('keeps the newest facts when they would pass the budget, and never half a fact', () => {
    const facts = [
      fact('old', { statement: 'x'.repeat(40), validFrom: '2026-01-01T00:00:00.000Z' }),
      fact('new', { statement: 'y'.repeat(40), validFrom: '2026-06-01T00:00:00.000Z' }),
      fact('mid', { statement: 'z'.repeat(40), validFrom: '2026-03-01T00:00:00.000Z' }),
    ];
    const text = renderProfile(facts, 100);
    expect(text).toContain('y'.repeat(40));
    expect(text).toContain('z'.repeat(40));
    expect(text).not.toContain('x');
    expect(renderProfile([])).toBe('');
  });
});

describe('fetchProfileWithin', () => {
  afterEach(() => vi.useRealTimers());

  it("answers the user's active facts only", async () => {
    const store = new MemoryProfileFacts();
    await storeFacts(store, fact('a'));
    await storeFacts(store, fact('b', { status: 'superseded' }));
    await storeFacts(store, fact('c', { userId: 'user_002' }));
    const warnings = new Warnings();
    const found = await fetchProfileWithin(store, 'user_001', PROFILE_FETCH_BUDGET_MS, warnings);
    expect(found?.map((f) => f.id)).toEqual(['a']);
    expect(warnings.lines).toEqual([]);
  });

  it('gives up on a profile that does not answer once the budget is spent, and says why', async () => {
    vi.useFakeTimers();
    const hanging: Pick<ProfileFacts, 'list'> = { list: () => new Promise(() => undefined) };
    const warnings = new Warnings();
    let settled: ProfileFact[] | undefined | 'pending' = 'pending';
    const fetching = fetchProfileWithin(hanging, 'user_001', PROFILE_FETCH_BUDGET_MS, warnings).then(
      (facts) => (settled = facts),
    );
    await vi.advanceTimersByTimeAsync(PROFILE_FETCH_BUDGET_MS - 1);
    expect(settled).toBe('pending');
    await vi.advanceTimersByTimeAsync(1);
    await fetching;
    expect(settled).toBeUndefined();
    expect(warnings.lines).toEqual([
      'The profile of user user_001 did not answer within 2000 ms: the conversation starts with the basic system prompt.',
    ]);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('drops a late failure of a read it gave up on, leaving no unhandled rejection', async () => {
    vi.useFakeTimers();
    let fail: (error: Error) => void = () => undefined;
    const late: Pick<ProfileFacts, 'list'> = {
      list: () => new Promise((_resolve, reject) => (fail = reject)),
    };
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => void unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    try {
      const fetching = fetchProfileWithin(late, 'user_001', 50, new Warnings());
      await vi.advanceTimersByTimeAsync(50);
      expect(await fetching).toBeUndefined();
      fail(new Error('too late'));
      vi.useRealTimers();
      await new Promise((resolve) => setTimeout(resolve, 10));
      expect(unhandled).toEqual([]);
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  });

  it('answers undefined, with the error, when the profile fails or the port throws', async () => {
    const warnings = new Warnings();
    const failing: Pick<ProfileFacts, 'list'> = { list: () => Promise.reject(new Error('cosmos is down')) };
    const throwing: Pick<ProfileFacts, 'list'> = {
      list: () => {
        throw new Error('no client');
      },
    };
    expect(await fetchProfileWithin(failing, 'user_001', 1_000, warnings)).toBeUndefined();
    expect(await fetchProfileWithin(throwing, 'user_001', 1_000, warnings)).toBeUndefined();
    expect(warnings.lines).toHaveLength(2);
    expect(warnings.lines[0]).toMatch(/could not be read.*cosmos is down/);
    expect(warnings.lines[1]).toMatch(/could not be read.*no client/);
  });
});
