// The failTurn activity over in-memory ports: the user's message and the text its client was shown are kept, the
// header touched before the stream ends with `error`, and the turn announced once.
import { beforeEach, describe, expect, it } from 'vitest';
import {
  answerReply,
  Crash,
  input,
  ref,
  round0,
  ScriptedModel,
  TurnFixture,
} from '../../../test/support/turn-fixture.js';
import type { ConversationPath } from '../../history/contracts.js';
import { DependencyError } from '../../errors.js';
import type { MessageCompleted } from '../../conversation/message-completed.js';
import { answerText } from '../../streaming/turn-transcript.js';
import { failTurn } from './fail-turn.js';
import { llmStep } from './llm-step.js';
import { stepCause, TURN_FAILURES } from './turn-failure.js';

const unmarked = (error: unknown) => {
  throw stepCause(error);
};

let t: TurnFixture;

beforeEach(() => {
  t = new TurnFixture();
});

describe('failTurn', () => {
  it('record a failed turn with the text its client was shown, end the stream with error, and announce it', async () => {
    t.model = new ScriptedModel([
      { reply: answerReply, crash: new Crash(3) },
      { reply: answerReply, crash: new Crash(4) },
    ]);
    await expect(llmStep(t.services(), round0)).rejects.toThrow('died');
    await expect(llmStep(t.services(), round0)).rejects.toThrow('died');
    const shown = answerText(t.storedEvents());
    expect(shown).toBe('The sum is');

    const failure = { code: 'llm_unavailable', message: 'The model did not answer.' };
    const failInput = { ...ref, userText: input.text, postedAt: input.postedAt, failure };
    await failTurn(t.services(), failInput);
    expect(t.memory.messages).toEqual([
      expect.objectContaining({ role: 'user', content: input.text, failure }),
      expect.objectContaining({ role: 'assistant', content: shown, finishReason: 'error' }),
    ]);
    const stream = t.storedEvents();
    expect(stream.at(-1)).toMatchObject({ type: 'error', code: 'llm_unavailable', seq: stream.length });
    expect(t.published[0]).toMatchObject({ body: { outcome: 'failed' } });

    // Running it again adds nothing.
    await failTurn(t.services(), failInput);
    expect(t.storedEvents()).toEqual(stream);
    expect(t.memory.messages).toHaveLength(2);
  });

  it('touch the header of a failed turn before its error is stored, with the text its client was shown', async () => {
    t.model = new ScriptedModel([{ reply: answerReply, crash: new Crash(3) }]);
    await expect(llmStep(t.services(), round0)).rejects.toThrow('died');
    const failure = { code: 'llm_unavailable', message: 'The model did not answer.' };
    await failTurn(t.services(), { ...ref, userText: input.text, postedAt: input.postedAt, failure });
    expect(t.headers.touches).toHaveLength(1);
    expect(t.headers.touches[0]!.storedBefore).not.toContain('error');
    expect(t.headers.touches[0]!.touch).toMatchObject({
      messageCount: 2,
      preview: 'The sum',
      firstUserText: input.text,
    });
  });

  describe('while the hot store does not answer', () => {
    const down = () => Promise.reject(new DependencyError('redis', 'Redis read failed: connection refused.'));
    const failure = { code: 'dependency_unavailable', message: 'The hot store did not answer.' };
    const failInput = { ...ref, userText: input.text, postedAt: input.postedAt, failure };

    it('send the message-start a failed first round stored, so the live stream ends with no gap', async () => {
      t.memory.load = down;
      await expect(llmStep(t.services(), round0).catch(unmarked)).rejects.toBeInstanceOf(DependencyError);
      t.turns.get = down;
      await failTurn(t.services(), failInput);
      const stored = t.storedEvents();
      expect(stored.map((event) => event.type)).toEqual(['message-start', 'error']);
      // A WebSocket client gets every stored event, so the error it ends on has nothing missing before it. The
      // failing step sends again what the round stored (its attempt may have died before sending it): the client
      // keeps each seq once.
      const seqs = t.events.sent.map((event) => event.seq);
      expect([...new Set(seqs)]).toEqual([1, 2]);
      expect(seqs).toEqual([1, 1, 2]);
    });

    it('name the hot store in an error its step could not place, and keep a placed class as it is', async () => {
      t.memory.load = down;
      t.turns.get = down;
      await failTurn(t.services(), { ...failInput, failure: TURN_FAILURES.turn_failed });
      expect(t.storedEvents().at(-1)).toMatchObject({
        type: 'error',
        ...TURN_FAILURES.hot_store_unavailable,
      });

      t = new TurnFixture();
      t.memory.load = down;
      t.turns.get = down;
      await failTurn(t.services(), { ...failInput, failure: TURN_FAILURES.storage_unavailable });
      expect(t.storedEvents().at(-1)).toMatchObject({ type: 'error', code: 'storage_unavailable' });
    });

    it("number the kept message after the header's count and keep it on the header's branch path", async () => {
      // The conversation shows a branch: turn `leaf` on branch `b`, whose path skips ordinals 2 and 3.
      const path: ConversationPath = {
        leafChatMessageId: 'leaf',
        branch: { parentChatMessageId: 'before', branchId: 'b', gaps: [{ from: 2, to: 4 }] },
        lastOrdinal: 5,
      };
      await t.headers.touch({
        userId: ref.userId,
        sessionId: ref.sessionId,
        createdAt: '2026-11-21T09:00:00.000Z',
        lastActivity: '2026-11-21T09:30:00.000Z',
        messageCount: 6,
        preview: 'earlier',
        firstUserText: 'hello',
        opensConversation: true,
        path,
        branched: true,
      });
      t.memory.load = down;
      t.turns.get = down;
      await failTurn(t.services(), failInput);

      const body = t.published[0]?.body as MessageCompleted;
      expect(body.messages).toEqual([
        expect.objectContaining({
          role: 'user',
          ordinal: 6,
          branch: { parentChatMessageId: 'leaf', branchId: 'b', gaps: [{ from: 2, to: 4 }] },
        }),
      ]);
      const header = await t.headers.get(ref.userId, ref.sessionId);
      expect(header).toMatchObject({
        messageCount: 7,
        path: {
          leafChatMessageId: ref.chatMessageId,
          branch: { parentChatMessageId: 'leaf', branchId: 'b', gaps: [{ from: 2, to: 4 }] },
          lastOrdinal: 6,
        },
      });
    });
  });
});
