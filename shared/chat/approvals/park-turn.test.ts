import { describe, expect, it } from 'vitest';
import { MemoryPostedMessages, MemorySessions, MemoryTurns } from '../../../test/support/in-memory-ports.js';
import { parkTurn } from './park-turn.js';

const HASH = 'a'.repeat(64);

async function scene(posts: { chatMessageId: string; postedAt: string }[]) {
  const sessions = new MemorySessions();
  const session = await sessions.create('user_001');
  const posted = new MemoryPostedMessages(undefined, sessions);
  for (const post of posts)
    await posted.claim({ userId: 'user_001', sessionId: session.sessionId, textSha256: HASH, ...post });
  const turns = new MemoryTurns();
  const turn = { userId: 'user_001', sessionId: session.sessionId, chatMessageId: 'turn-1' };
  return { sessions, posted, turns, turn, services: { turns, approvalMarks: { sessions, posted } } };
}

describe('parkTurn', () => {
  it('marks the session, then parks the turn when no later message was posted', async () => {
    const { sessions, turns, turn, services } = await scene([
      { chatMessageId: 'turn-1', postedAt: '2026-11-22T10:00:01.000Z' },
    ]);
    expect(await parkTurn(services, turn)).toEqual({});
    expect(await sessions.find(turn.userId, turn.sessionId)).toMatchObject({ approvals: true });
    expect(turns.parked.get(turn.sessionId)).toBe('turn-1');
  });

  it('does not park, and says the user moved on, when a message was posted after the turn', async () => {
    // Posted before the session's mark, the later message carries no `mayPark`: its worker will not look for a
    // parked turn, so this one must not park (the worker would answer the new message before it).
    const { sessions, turns, turn, services } = await scene([
      { chatMessageId: 'turn-1', postedAt: '2026-11-22T10:00:01.000Z' },
      { chatMessageId: 'turn-2', postedAt: '2026-11-22T10:00:02.000Z' },
    ]);
    expect(await parkTurn(services, turn)).toEqual({ movedOn: true });
    expect(await sessions.find(turn.userId, turn.sessionId)).toMatchObject({ approvals: true });
    expect(turns.parked.has(turn.sessionId)).toBe(false);
  });
});
