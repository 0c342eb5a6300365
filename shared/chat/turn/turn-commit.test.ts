// The commit of an answered turn over in-memory ports: the conversation's header is touched once per commit, before
// the stream ends, also by the attempt that finishes a turn committed just before a crash.
import { beforeEach, describe, expect, it } from 'vitest';
import {
  answerReply,
  input,
  round0,
  ScriptedModel,
  TurnFixture,
} from '../../../test/support/turn-fixture.js';
import { llmStep } from './llm-step.js';

let t: TurnFixture;

beforeEach(() => {
  t = new TurnFixture();
});

describe('the commit of a turn', () => {
  it('touch the header once per commit, before the stream ends, so a client that saw the end can list it', async () => {
    await t.runWholeTurn();
    expect(t.headers.touches).toHaveLength(1);
    expect(t.headers.touches[0]!.storedBefore).not.toContain('message-end');
    expect(t.headers.touches[0]!.touch).toEqual({
      userId: input.userId,
      sessionId: input.sessionId,
      createdAt: input.postedAt,
      lastActivity: '2026-11-21T10:00:05.000Z',
      messageCount: 2,
      preview: 'The sum is 5.',
      firstUserText: input.text,
      opensConversation: true,
      // The conversation's first turn begins the main line, and its path.
      path: {
        leafChatMessageId: input.chatMessageId,
        branch: { parentChatMessageId: null, branchId: 'main', gaps: [] },
        lastOrdinal: 1,
      },
    });
    expect(await t.headers.get(input.userId, input.sessionId)).toMatchObject({
      title: input.text,
      titleSource: 'first-message',
      messageCount: 2,
    });
    // The announcement comes after the touch: the history worker finds the header it needs.
    expect(t.published).toHaveLength(1);
  });

  it('touch the header again, before message-end, when finishing a turn committed just before a crash', async () => {
    t.model = new ScriptedModel([answerReply]);
    await llmStep(t.services(), round0);
    const all = t.storedEvents();
    const end = all.at(-1)!;
    t.events.stored.delete(end.seq);
    t.events.batches.delete(end.seq);

    t.model = new ScriptedModel([]);
    await llmStep(t.services(), round0);
    expect(t.headers.touches).toHaveLength(2);
    expect(t.headers.touches[1]!.storedBefore).not.toContain('message-end');
    expect(t.storedEvents().at(-1)?.type).toBe('message-end');
    expect(t.headers.touches[1]!.touch).toEqual(t.headers.touches[0]!.touch);

    // Once the stream has ended, a later run still touches once (harmless) and adds no event.
    await llmStep(t.services(), round0);
    expect(t.headers.touches).toHaveLength(3);
    expect(t.storedEvents()).toHaveLength(all.length);
  });
});
