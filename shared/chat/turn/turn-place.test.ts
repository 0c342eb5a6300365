// The turn's place in the conversation's tree over in-memory ports: each turn continues the active path, an edit or
// a regenerate follows the replaced turn's parent, and the commit lands on the turn's branch whatever is shown.
import { beforeEach, describe, expect, it } from 'vitest';
import {
  answerReply,
  Crash,
  input,
  ref,
  round0,
  ScriptedModel,
  toolCallReply,
  TurnFixture,
} from '../../../test/support/turn-fixture.js';
import { MemoryEvents } from '../../../test/support/in-memory-ports.js';
import { NotReadyError } from '../../errors.js';
import type { SessionDigest } from '../../history/contracts.js';
import type { StreamChatRequest } from '../../llm/llm-gateway.js';
import type { MessageCompleted } from '../../conversation/message-completed.js';
import { BASIC_SYSTEM_PROMPT } from '../prompt.js';
import { failTurn } from './fail-turn.js';
import { llmStep } from './llm-step.js';
import { runTool } from './run-tool.js';

let t: TurnFixture;

beforeEach(() => {
  t = new TurnFixture();
});

describe('the place of a turn', () => {
  describe('branches', () => {
    // The committed turns' ids: a tool names an exchange by its turn's id, which is a UUID.
    const [A, B, C] = [
      'aaaaaaaa-0000-4000-8000-000000000001',
      'bbbbbbbb-0000-4000-8000-000000000002',
      'cccccccc-0000-4000-8000-000000000003',
    ];
    /** Committed turns, each continuing the one before: a (0,1), b (2,3), c (4,5). */
    async function threeTurns() {
      for (const [label, id] of [
        ['a', A],
        ['b', B],
        ['c', C],
      ] as const)
        await t.memory.append(input.userId, input.sessionId, [
          {
            messageId: `${id}_user`,
            chatMessageId: id,
            role: 'user',
            content: `question ${label}`,
            timestamp: 't',
          },
          {
            messageId: `${id}_assistant`,
            chatMessageId: id,
            role: 'assistant',
            content: `answer ${label}`,
            timestamp: 't',
          },
        ]);
    }

    const said = (request: StreamChatRequest | undefined) =>
      (request?.messages ?? []).filter((m) => m.role !== 'system').map((m) => m.content);

    const editOfB = {
      ...round0,
      message: { ...round0.message!, fork: { replaces: B, origin: 'edit' as const } },
    };

    it('stamp the branch on both messages of every turn and on its announcement, each continuing the path', async () => {
      t.model = new ScriptedModel([answerReply]);
      await threeTurns();
      await llmStep(t.services(), round0);
      const branch = { parentChatMessageId: C, branchId: 'main', gaps: [] };
      const committed = t.memory.messages.filter((m) => m.chatMessageId === input.chatMessageId);
      expect(committed.map((m) => [m.role, m.ordinal, m.branch])).toEqual([
        ['user', 6, branch],
        ['assistant', 7, branch],
      ]);
      expect(t.memory.path).toEqual({ leafChatMessageId: input.chatMessageId, branch, lastOrdinal: 7 });
      const announced = t.published[0]?.body as MessageCompleted;
      expect(announced.messages.map((m) => m.branch)).toEqual([branch, branch]);
    });

    it("follow an edit's parent: the prompt holds only that path, and a retried round 0 decides the same branch", async () => {
      await threeTurns();
      t.model = new ScriptedModel([{ reply: answerReply, crash: new Crash(2) }, answerReply]);
      await expect(llmStep(t.services(), editOfB)).rejects.toThrow('died');
      // The first attempt moved working memory to a's path: the retry finds a as the leaf.
      expect(t.memory.path?.leafChatMessageId).toBe(A);
      expect(await llmStep(t.services(), editOfB)).toMatchObject({ outcome: 'answered' });
      expect(said(t.model.requests[0])).toEqual(['question a', 'answer a', input.text]);
      expect(said(t.model.requests[1])).toEqual(said(t.model.requests[0]));
      const branch = {
        parentChatMessageId: A,
        branchId: input.chatMessageId,
        alternativeOf: B,
        origin: 'edit',
        gaps: [{ from: 2, to: 6 }],
      };
      expect(t.committedAnswer()?.branch).toEqual(branch);
      const loaded = await t.memory.load(input.userId, input.sessionId);
      expect(loaded.messages.map((m) => m.chatMessageId)).toEqual([
        A,
        A,
        input.chatMessageId,
        input.chatMessageId,
      ]);
      expect(loaded.offPath?.map((m) => m.chatMessageId)).toEqual([B, B, C, C]);
      expect((t.published[0]?.body as MessageCompleted).messages.map((m) => m.branch)).toEqual([
        branch,
        branch,
      ]);
    });

    it('keep the branch in the turn record of a round that asks for tools, and commit on it later', async () => {
      await threeTurns();
      const first = await llmStep(t.services(), editOfB);
      expect(t.turns.turns.get(input.chatMessageId)?.branch).toMatchObject({
        parentChatMessageId: A,
        alternativeOf: B,
      });
      await runTool(t.services(), { ...ref, round: 0, index: 0, seq: first.nextSeq });
      await llmStep(t.services(), { ...ref, round: 1, firstSeq: first.nextSeq + 1, toolsAllowed: true });
      expect(said(t.model.requests[1]).slice(0, 3)).toEqual(['question a', 'answer a', input.text]);
      expect(t.committedAnswer()?.branch).toEqual(t.turns.turns.get(input.chatMessageId)?.branch);
    });

    it("give the turn's tools its path: an exchange the edit left is refused as another branch's", async () => {
      await threeTurns();
      await t.longTerm.put(
        t.memory.messages
          .filter((m) => m.chatMessageId === B)
          .map((m) => ({
            ...m,
            id: m.messageId,
            kind: 'message' as const,
            userId: input.userId,
            sessionId: input.sessionId,
            ordinal: m.ordinal ?? 0,
          })),
      );
      t.model = new ScriptedModel([
        {
          ...toolCallReply,
          toolCalls: [
            { id: 'call_b', name: 'retrieve_past_answer', arguments: JSON.stringify({ exchangeId: B }) },
          ],
        },
        answerReply,
      ]);
      const first = await llmStep(t.services(), editOfB);
      expect(await runTool(t.services(), { ...ref, round: 0, index: 0, seq: first.nextSeq })).toEqual({
        isError: true,
      });
      expect(t.turns.results.get(`${input.chatMessageId}/0/0`)?.result).toMatch(/another branch/);
    });

    it("leave a digest out of a fork's prompt when it folded turns the fork skips, and keep it otherwise", async () => {
      await threeTurns();
      const digest: SessionDigest = {
        summary: 'The user asked about a and b.',
        summarizedThrough: 4,
        recentExchanges: [],
        summarizedTokens: 0,
        updatedAt: 't',
        gaps: [],
      };
      await t.sessionMemory.putDigest(input.userId, input.sessionId, digest, undefined);
      t.model = new ScriptedModel([answerReply, answerReply]);
      await llmStep(t.services(), editOfB);
      const systemTexts = (request: StreamChatRequest | undefined) =>
        (request?.messages ?? []).filter((m) => m.role === 'system').map((m) => m.content);
      expect(systemTexts(t.model.requests[0])).toHaveLength(1);
      // The next turn continues the edit's path: still not the path the digest was folded along.
      t.events = new MemoryEvents();
      const next = { ...ref, chatMessageId: 'e1e1e1e1-7425-40de-944b-e07fc1f90ae7' };
      await llmStep(t.services(), { ...round0, ...next });
      expect(systemTexts(t.model.requests[1])).toHaveLength(1);
      // A regenerate of c follows b: the digest's summary of a and b stands for that path.
      t.events = new MemoryEvents();
      t.model = new ScriptedModel([answerReply]);
      const regenerate = { ...round0, chatMessageId: 'f2f2f2f2-7425-40de-944b-e07fc1f90ae7' };
      await llmStep(t.services(), {
        ...regenerate,
        message: { ...round0.message!, fork: { replaces: C, origin: 'regenerate' } },
      });
      expect(systemTexts(t.model.requests[0])).toEqual([
        BASIC_SYSTEM_PROMPT,
        expect.stringContaining('a and b'),
      ]);
    });

    it('keep a failed edit on the branch it began', async () => {
      await threeTurns();
      const failure = { code: 'llm_unavailable', message: 'The model did not answer.' };
      await failTurn(t.services(), {
        ...ref,
        userText: 'edited question',
        postedAt: input.postedAt,
        failure,
        fork: { replaces: B, origin: 'edit' },
      });
      const kept = t.memory.messages.find((m) => m.chatMessageId === input.chatMessageId);
      expect(kept).toMatchObject({ content: 'edited question', failure, ordinal: 6 });
      expect(kept?.branch).toMatchObject({
        parentChatMessageId: A,
        alternativeOf: B,
        gaps: [{ from: 2, to: 6 }],
      });
      expect(t.memory.path?.leafChatMessageId).toBe(input.chatMessageId);
    });

    it('commit on the path the turn began on when the user switched branches while it ran', async () => {
      await threeTurns();
      t.model = new ScriptedModel([toolCallReply, answerReply]);
      const first = await llmStep(t.services(), round0);
      // Meanwhile the user shows b's path (as a switch to another branch would).
      const b = await t.memory.findTurn(input.userId, input.sessionId, B);
      await t.memory.showPath(input.userId, input.sessionId, b!);
      await runTool(t.services(), { ...ref, round: 0, index: 0, seq: first.nextSeq });
      await llmStep(t.services(), { ...ref, round: 1, firstSeq: first.nextSeq + 1, toolsAllowed: true });
      expect(t.committedAnswer()?.branch).toEqual({ parentChatMessageId: C, branchId: 'main', gaps: [] });
      expect(t.memory.path?.leafChatMessageId).toBe(input.chatMessageId);
    });

    it('send a later round the history of its own path when the user switched branches while tools ran', async () => {
      await threeTurns();
      t.model = new ScriptedModel([toolCallReply, answerReply]);
      const first = await llmStep(t.services(), round0);
      const b = await t.memory.findTurn(input.userId, input.sessionId, B);
      await t.memory.showPath(input.userId, input.sessionId, b!);
      await runTool(t.services(), { ...ref, round: 0, index: 0, seq: first.nextSeq });
      await llmStep(t.services(), { ...ref, round: 1, firstSeq: first.nextSeq + 1, toolsAllowed: true });
      expect(said(t.model.requests[1]).slice(0, 7)).toEqual(said(t.model.requests[0]));
      expect(said(t.model.requests[0])).toEqual([
        'question a',
        'answer a',
        'question b',
        'answer b',
        'question c',
        'answer c',
        input.text,
      ]);
    });

    it('refuse to go on while the replaced turn cannot be found, so the step is retried', async () => {
      await threeTurns();
      await expect(
        llmStep(t.services(), {
          ...round0,
          message: { ...round0.message!, fork: { replaces: 'zz', origin: 'edit' } },
        }),
      ).rejects.toMatchObject({ cause: expect.any(NotReadyError) });
      expect(t.model.requests).toHaveLength(0);
    });
  });
});
