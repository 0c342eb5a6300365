// The prompt of each model round over in-memory ports: the history in the budget, the digest on the turn's path,
// and a new conversation's system prompt, personalised from the profile within its budget.
import { beforeEach, describe, expect, it, vi } from 'vitest';
import {
  answerReply,
  input,
  ref,
  round0,
  ScriptedModel,
  toolCallReply,
  TurnFixture,
} from '../../../test/support/turn-fixture.js';
import { MemoryEvents, MemoryTurns, MemoryWorkingMemory } from '../../../test/support/in-memory-ports.js';
import { storeFacts } from '../../../test/support/memory-fixtures.js';
import type { SessionDigest } from '../../history/contracts.js';
import { PROFILE_FETCH_BUDGET_MS, type ProfileFact } from '../../memory/contracts.js';
import { BASIC_SYSTEM_PROMPT } from '../prompt.js';
import { failTurn } from './fail-turn.js';
import { llmStep } from './llm-step.js';
import { runTool } from './run-tool.js';
import { noDigestYet } from './round-state.js';
import { MAIN_BRANCH } from '../../conversation/branches.js';

let t: TurnFixture;

beforeEach(() => {
  t = new TurnFixture();
});

describe('the prompt of a round', () => {
  it('build the prompt from the history in the budget, and rebuild the same one in a later round', async () => {
    t.memory.messages = [
      { messageId: 'a_user', chatMessageId: 'a', role: 'user', content: 'earlier question', timestamp: 't' },
      {
        messageId: 'a_assistant',
        chatMessageId: 'a',
        role: 'assistant',
        content: 'earlier answer',
        timestamp: 't',
      },
    ];
    await t.runWholeTurn();
    expect(t.turns.turns.get(input.chatMessageId)?.history).toEqual({
      fromMessageId: 'a_user',
      toMessageId: 'a_assistant',
    });
    expect(t.model.requests[0]?.messages.map((m) => m.content).slice(1)).toEqual([
      'earlier question',
      'earlier answer',
      input.text,
    ]);
    expect(t.model.requests[1]?.messages.slice(0, 4)).toEqual(t.model.requests[0]?.messages);
  });

  it('give the model a context its client brought instead of the history, as given, in every round', async () => {
    t.memory.messages = [
      { messageId: 'a_user', chatMessageId: 'a', role: 'user', content: 'stored question', timestamp: 't' },
    ];
    const context = [
      { role: 'system' as const, content: 'Answer briefly.' },
      { role: 'user' as const, content: 'given question' },
      {
        role: 'assistant' as const,
        content: '',
        tool_calls: [{ id: 'c1', name: 'lookup', arguments: '{}' }],
      },
      { role: 'tool' as const, tool_call_id: 'c1', content: 'given result' },
    ];
    const first = await llmStep(t.services(), { ...round0, message: { ...round0.message!, context } });
    expect(first.outcome).toBe('tools');
    await runTool(t.services(), { ...ref, round: 0, index: 0, seq: first.nextSeq });
    await llmStep(t.services(), { ...ref, round: 1, firstSeq: first.nextSeq + 1, toolsAllowed: true });
    for (const request of t.model.requests) {
      expect(request.messages[0]?.role).toBe('system');
      expect(request.messages.slice(1, 6)).toEqual([...context, { role: 'user', content: input.text }]);
      expect(request.messages.map((m) => m.content)).not.toContain('stored question');
    }
    expect(t.model.requests).toHaveLength(2);
  });

  it('give the model the digest and leave out the history it summarises, in every round', async () => {
    // A conversation with a digest is one whose older turns left working memory: its window starts past them.
    t.memory.messages = [
      {
        messageId: 'a_user',
        chatMessageId: 'a',
        role: 'user',
        content: 'old question',
        timestamp: 't',
        ordinal: 20,
      },
      {
        messageId: 'a_assistant',
        chatMessageId: 'a',
        role: 'assistant',
        content: 'old answer',
        timestamp: 't',
        ordinal: 21,
      },
      {
        messageId: 'b_user',
        chatMessageId: 'b',
        role: 'user',
        content: 'recent question',
        timestamp: 't',
        ordinal: 22,
      },
      {
        messageId: 'b_assistant',
        chatMessageId: 'b',
        role: 'assistant',
        content: 'recent answer',
        timestamp: 't',
        ordinal: 23,
      },
    ];
    const digest: SessionDigest = {
      summary: 'Earlier the user asked an old question.',
      summarizedThrough: 22,
      recentExchanges: [
        { exchangeId: 'a', ordinal: 20, line: 'old question, old answer', tags: ['old'], at: 't' },
      ],
      summarizedTokens: 0,
      updatedAt: 't',
      gaps: [],
    };
    await t.sessionMemory.putDigest(input.userId, input.sessionId, digest, undefined);
    await t.runWholeTurn();
    const sent = t.model.requests[0]!.messages;
    expect(sent.map((m) => m.role)).toEqual(['system', 'system', 'user', 'assistant', 'user']);
    expect(sent[1]?.content).toContain('Summary of the earlier part of this conversation: ' + digest.summary);
    expect(sent[1]?.content).toContain('- a: old question, old answer [old]');
    expect(sent.slice(2).map((m) => m.content)).toEqual(['recent question', 'recent answer', input.text]);
    expect(sent.some((m) => m.content === 'old question')).toBe(false);
    // The turn record keeps the range of the history it sent, and the next round sends the same prompt.
    expect(t.turns.turns.get(input.chatMessageId)?.history).toEqual({
      fromMessageId: 'b_user',
      toMessageId: 'b_assistant',
    });
    expect(t.model.requests[1]?.messages.slice(0, 5)).toEqual(sent);
  });

  describe("a new conversation's system prompt", () => {
    const sailing: ProfileFact = {
      id: 'fact-1',
      kind: 'fact',
      userId: input.userId,
      category: 'interests',
      statement: 'Loves sailing.',
      status: 'active',
      validFrom: '2026-11-01T09:00:00.000Z',
      provenance: [
        { sessionId: 'earlier', chatMessageId: 'c', messageId: 'c_user', at: '2026-11-01T09:00:00.000Z' },
      ],
      createdAt: '2026-11-01T09:00:00.000Z',
      updatedAt: '2026-11-01T09:00:00.000Z',
    };

    /** Counts the profile's reads. */
    function countReads(): { reads: number } {
      const counter = { reads: 0 };
      const list = t.profile.list.bind(t.profile);
      t.profile.list = (...args) => {
        counter.reads += 1;
        return list(...args);
      };
      return counter;
    }

    it("is personalised with the user's facts, sent in every round, stored and announced with the turn", async () => {
      await storeFacts(t.profile, sailing);
      await storeFacts(t.profile, {
        ...sailing,
        id: 'fact-2',
        statement: 'Likes golf.',
        status: 'superseded',
      });
      const counter = countReads();
      await t.runWholeTurn();
      const system = t.model.requests[0]?.messages[0];
      expect(system?.role).toBe('system');
      expect(system?.content).toContain(`${BASIC_SYSTEM_PROMPT}\n\n`);
      expect(system?.content).toContain('- Loves sailing.');
      expect(system?.content).not.toContain('golf');
      // The tool round's prompt is the same, from the turn record: the profile was read once.
      expect(t.model.requests[1]?.messages[0]).toEqual(system);
      expect(counter.reads).toBe(1);
      const expected = {
        content: system?.content,
        personalised: true,
        createdAt: '2026-11-21T10:00:05.000Z',
      };
      expect(t.turns.turns.get(input.chatMessageId)?.systemPrompt).toEqual(expected);
      expect(t.memory.systemPrompt).toEqual(expected);
      expect(t.published[0]?.body).toMatchObject({ systemPrompt: expected });
      // Not a numbered message: the turn's ordinals are 0 and 1 as ever.
      expect(t.memory.messages.map((m) => m.ordinal)).toEqual([0, 1]);
    });

    it("is the stored one in the conversation's later turns, without reading the profile again", async () => {
      await storeFacts(t.profile, sailing);
      t.model = new ScriptedModel([answerReply, answerReply]);
      await llmStep(t.services(), round0);
      const first = t.model.requests[0]?.messages[0];
      expect(first?.content).toContain('Loves sailing.');
      const counter = countReads();
      await storeFacts(t.profile, { ...sailing, id: 'fact-3', statement: 'Now loves rowing.' });

      const next = { ...ref, chatMessageId: '1b4e28ba-2fa1-11d2-883f-0016d3cca427' };
      t.events = new MemoryEvents();
      t.published = [];
      await llmStep(t.services(), {
        ...round0,
        ...next,
        message: { text: 'and now?', postedAt: input.postedAt },
      });
      expect(t.model.requests[1]?.messages[0]).toEqual(first);
      expect(counter.reads).toBe(0);
      // Only the turn that opened the conversation announces the prompt.
      expect(t.published[0]?.body).not.toHaveProperty('systemPrompt');
    });

    it('is the basic one when the turn was posted with use_memory false: the profile is never read', async () => {
      await storeFacts(t.profile, sailing);
      const counter = countReads();
      t.model = new ScriptedModel([answerReply]);
      await llmStep(t.services(), { ...round0, useMemory: false });
      expect(t.model.requests[0]?.messages[0]).toEqual({ role: 'system', content: BASIC_SYSTEM_PROMPT });
      expect(counter.reads).toBe(0);
      expect(t.memory.systemPrompt).toMatchObject({ content: BASIC_SYSTEM_PROMPT, personalised: false });
      expect(t.published[0]?.body).toMatchObject({ useMemory: false, systemPrompt: { personalised: false } });
    });

    it('is the basic one when the profile does not answer within its budget, which the round waits for at most', async () => {
      vi.useFakeTimers();
      try {
        t.profile.list = () => new Promise(() => undefined);
        const warnings: string[] = [];
        t.model = new ScriptedModel([answerReply]);
        const step = llmStep(
          {
            ...t.services(),
            log: { warn: (...args: unknown[]) => void warnings.push(args.map(String).join(' ')) },
          },
          round0,
        );
        await vi.advanceTimersByTimeAsync(PROFILE_FETCH_BUDGET_MS - 1);
        expect(t.model.requests).toHaveLength(0);
        await vi.advanceTimersByTimeAsync(1);
        await vi.runAllTimersAsync();
        expect(await step).toMatchObject({ outcome: 'answered' });
        expect(t.model.requests[0]?.messages[0]).toEqual({ role: 'system', content: BASIC_SYSTEM_PROMPT });
        expect(warnings).toEqual([
          `The profile of user ${input.userId} did not answer within 2000 ms: the conversation starts with the basic system prompt.`,
        ]);
        expect(t.memory.systemPrompt?.personalised).toBe(false);
      } finally {
        vi.useRealTimers();
      }
    });

    it('is announced again with the commit a crashed step had made, and kept by a turn that failed after a tool round', async () => {
      await storeFacts(t.profile, sailing);
      t.model = new ScriptedModel([answerReply]);
      await llmStep(t.services(), round0);
      const end = t.storedEvents().at(-1)!;
      t.events.stored.delete(end.seq);
      t.events.batches.delete(end.seq);
      t.model = new ScriptedModel([]);
      await llmStep(t.services(), round0);
      expect(t.published).toHaveLength(2);
      expect(t.published[1]?.body).toEqual(t.published[0]?.body);
      expect(t.published[1]?.body).toMatchObject({ systemPrompt: { personalised: true } });

      // Another new conversation whose model asked for a tool, then failed: the prompt it was sent stays.
      t.memory = new MemoryWorkingMemory();
      t.turns = new MemoryTurns();
      t.events = new MemoryEvents();
      t.published = [];
      t.model = new ScriptedModel([toolCallReply]);
      await llmStep(t.services(), round0);
      const failure = { code: 'turn_failed', message: 'The answer could not be completed.' };
      await failTurn(t.services(), { ...ref, userText: input.text, postedAt: input.postedAt, failure });
      expect(t.memory.systemPrompt).toEqual(t.turns.turns.get(input.chatMessageId)?.systemPrompt);
      expect(t.published[0]?.body).toMatchObject({ outcome: 'failed', systemPrompt: { personalised: true } });
    });

    it('is the basic one, and none is stored, in a conversation begun before prompts were kept', async () => {
      await storeFacts(t.profile, sailing);
      const counter = countReads();
      t.memory.messages = [
        { messageId: 'a_user', chatMessageId: 'a', role: 'user', content: 'hi', timestamp: 't', ordinal: 0 },
      ];
      t.model = new ScriptedModel([answerReply]);
      await llmStep(t.services(), round0);
      expect(t.model.requests[0]?.messages[0]?.content).toBe(BASIC_SYSTEM_PROMPT);
      expect(counter.reads).toBe(0);
      expect(t.memory.systemPrompt).toBeUndefined();
    });
  });

  it('answer without the digest when it cannot be read', async () => {
    t.model = new ScriptedModel([answerReply]);
    t.sessionMemory.getDigest = () => Promise.reject(new Error('the store is down'));
    // A conversation that may have a digest: its older turns left working memory.
    t.memory.messages = [
      {
        messageId: 'z_user',
        chatMessageId: 'z',
        role: 'user',
        content: 'late question',
        timestamp: 't',
        ordinal: 40,
      },
      {
        messageId: 'z_assistant',
        chatMessageId: 'z',
        role: 'assistant',
        content: 'late answer',
        timestamp: 't',
        ordinal: 41,
      },
    ];
    const warnings: unknown[] = [];
    const step = await llmStep(
      { ...t.services(), log: { warn: (...args: unknown[]) => void warnings.push(args) } },
      round0,
    );
    expect(step.outcome).toBe('answered');
    // No digest message: the system prompt, then the history and the message.
    expect(t.model.requests[0]?.messages.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'user']);
    expect(warnings).toHaveLength(1);
  });
});

describe('whether a round reads the digest', () => {
  const message = (ordinal: number, content: string) => ({
    messageId: `m${ordinal}`,
    chatMessageId: `c${Math.floor(ordinal / 2)}`,
    role: ordinal % 2 === 0 ? ('user' as const) : ('assistant' as const),
    content,
    timestamp: 't',
    ordinal,
  });
  const memory = (messages: ReturnType<typeof message>[], messageCount = messages.length) => ({
    userId: input.userId,
    sessionId: input.sessionId,
    messages,
    messageCount,
  });

  it('skips it only while working memory holds the whole conversation, short and on one path', () => {
    expect(noDigestYet(memory([]), 1_000)).toBe(true);
    expect(noDigestYet(memory([message(0, 'hi'), message(1, 'hello')]), 1_000)).toBe(true);
    // Older messages left the window, a path moved, or the text nears half the budget: it is read.
    expect(noDigestYet(memory([message(4, 'hi'), message(5, 'hello')], 6), 1_000)).toBe(false);
    expect(noDigestYet({ ...memory([message(0, 'hi')]), offPath: [message(1, 'other')] }, 1_000)).toBe(false);
    const path = (branchId: string) => ({
      leafChatMessageId: 'c0',
      branch: { parentChatMessageId: null, branchId, gaps: [] },
      lastOrdinal: 1,
    });
    expect(
      noDigestYet({ ...memory([message(0, 'hi'), message(1, 'ok')]), path: path(MAIN_BRANCH) }, 1_000),
    ).toBe(true);
    expect(noDigestYet({ ...memory([message(0, 'hi'), message(1, 'ok')]), path: path('c7') }, 1_000)).toBe(
      false,
    );
    expect(noDigestYet(memory([message(0, 'x'.repeat(900)), message(1, 'ok')]), 1_000)).toBe(false);
  });
});
