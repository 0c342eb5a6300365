// The reasoning and the memory mark a committed turn keeps, so the conversation read back shows them as it did live.
import { describe, expect, it } from 'vitest';
import { MAX_KEPT_REASONING } from '../../conversation/messages.js';
import {
  answerReply,
  input,
  round0,
  ScriptedModel,
  TurnFixture,
} from '../../../test/support/turn-fixture.js';
import { llmStep } from './llm-step.js';
import { keptReasoning } from './turn-reasoning.js';

/** A clock that moves on one second each time it is read. */
function ticking(): () => Date {
  let at = Date.parse('2026-11-21T10:00:05.000Z');
  return () => new Date((at += 1_000));
}

describe("the answer's reasoning", () => {
  it("joins every round's summary with its measured time, and keeps nothing when there was none", () => {
    expect(
      keptReasoning([{ reasoning: 'Plan.', reasoningMs: 1_200 }], { reasoning: 'Check.', reasoningMs: 800 }),
    ).toEqual({
      reasoning: { text: 'Plan.\n\nCheck.', durationMs: 2_000 },
    });
    expect(keptReasoning([{ reasoning: '' }], { reasoning: 'Only.' })).toEqual({
      reasoning: { text: 'Only.' },
    });
    expect(keptReasoning([], { reasoning: '' })).toEqual({});
  });

  it('keeps at most its first MAX_KEPT_REASONING characters', () => {
    const long = 'a'.repeat(MAX_KEPT_REASONING) + 'the end';
    expect(keptReasoning([], { reasoning: long }).reasoning?.text).toBe('a'.repeat(MAX_KEPT_REASONING));
  });

  it('is committed with the answer, timed by the step clock from its first text to the answer', async () => {
    const t = new TurnFixture();
    t.model = new ScriptedModel([{ ...answerReply, reasoning: 'Two and three.' }]);
    const services = { ...t.services(), now: ticking() };
    await llmStep(services, round0);
    expect(t.committedAnswer()?.reasoning).toEqual({ text: 'Two and three.', durationMs: 1_000 });
    expect(t.committedAnswer()).not.toHaveProperty('useMemory');
  });
});

describe('a turn posted with use_memory false', () => {
  it('marks both its messages, in working memory and in its announcement', async () => {
    const t = new TurnFixture();
    t.model = new ScriptedModel([answerReply]);
    await llmStep(t.services(), { ...round0, useMemory: false });
    const turn = t.memory.messages.filter((m) => m.chatMessageId === input.chatMessageId);
    expect(turn.map((m) => [m.role, m.useMemory])).toEqual([
      ['user', false],
      ['assistant', false],
    ]);
    const announced = t.published[0]?.body as { messages: { useMemory?: boolean }[] };
    expect(announced.messages.map((m) => m.useMemory)).toEqual([false, false]);
  });
});
