// Working memory's retry and rebuild policy over the hot store's in-memory twin: a miss rebuilt from long-term
// history is written only if still absent, an append that keeps meeting newer versions gives up with a 409, and the
// stops, the delete and the digest's revision marked in the entry.
import { describe, expect, it } from 'vitest';
import {
  MemoryConversationHeaders,
  MemoryConversationMessages,
} from '../../test/support/in-memory-history.js';
import { MemoryHotStore } from '../../test/support/in-memory-hot-store.js';
import type { HotStore } from '../conversation/hot-store.js';
import { ConflictError } from '../errors.js';
import { assistantMessageId, userMessageId } from '../conversation/turn-ids.js';
import type { ConversationMessage } from '../conversation/messages.js';
import { createHotTurnCancellations } from './hot-turn-cancellations.js';
import { createHotWorkingMemory, markWorkingMemory } from './hot-working-memory.js';

const history = { headers: new MemoryConversationHeaders(), messages: new MemoryConversationMessages() };

const turn = (id: string): ConversationMessage[] => [
  {
    messageId: userMessageId(id),
    chatMessageId: id,
    role: 'user',
    content: 'hi',
    timestamp: '2026-11-26T10:00:00.000Z',
  },
  {
    messageId: assistantMessageId(id),
    chatMessageId: id,
    role: 'assistant',
    content: 'hello',
    timestamp: '2026-11-26T10:00:01.000Z',
    finishReason: 'stop',
  },
];

/** The twin, except that every write meets a conflict (another writer always got there first); counts them. */
function alwaysRaced(hot: MemoryHotStore): HotStore & { attempts: number } {
  return {
    attempts: 0,
    read: (sessionId, key) => hot.read(sessionId, key),
    list: (sessionId, prefix) => hot.list(sessionId, prefix),
    write() {
      this.attempts += 1;
      return Promise.resolve({ kind: 'conflict' });
    },
    deleteSession: (sessionId) => hot.deleteSession(sessionId),
  };
}

describe('working memory over the hot store', () => {
  it('writes a new conversation absent first, then over the version it read', async () => {
    const hot = new MemoryHotStore();
    const memory = createHotWorkingMemory({ hot, history, windowBytes: 10_000 });
    const first = await memory.append('user_001', 'session-1', turn('t1'));
    const second = await memory.append('user_001', 'session-1', turn('t2'), first);
    expect(second.messages.map((m) => m.ordinal)).toEqual([0, 1, 2, 3]);
    // The new entry, then its marks said complete (no stop was recorded before it), then the second turn.
    expect(hot.writes.map((w) => w.condition)).toEqual(['absent', 'version', 'version']);
  });

  it('carries the stops recorded before and after the entry was made, and a delete begun, as its marks', async () => {
    const hot = new MemoryHotStore();
    const memory = createHotWorkingMemory({ hot, history, windowBytes: 10_000 });
    const stops = createHotTurnCancellations(hot);
    const ref = (chatMessageId: string) => ({ userId: 'user_001', sessionId: 'session-3', chatMessageId });
    // Before: the record alone (there is no entry to mark yet).
    await stops.request(ref('t0'), '2026-11-26T10:00:00.000Z');
    expect((await memory.load('user_001', 'session-3')).marks).toBeUndefined();
    await memory.append('user_001', 'session-3', turn('t1'));
    expect((await memory.load('user_001', 'session-3')).marks).toEqual({ stopped: ['t0'] });
    // After: marked as it is recorded, and kept by the next commit.
    await stops.request(ref('t2'), '2026-11-26T10:00:02.000Z');
    await memory.append('user_001', 'session-3', turn('t2'));
    await markWorkingMemory(hot, ref('t2'), { deletingAt: '2026-11-26T10:00:03.000Z' });
    expect((await memory.load('user_001', 'session-3')).marks).toEqual({
      stopped: ['t0', 't2'],
      deletingAt: '2026-11-26T10:00:03.000Z',
    });
  });

  it('says a new conversation has no digest, and keeps the newest digest revision marked', async () => {
    const hot = new MemoryHotStore();
    const memory = createHotWorkingMemory({ hot, history, windowBytes: 10_000 });
    // No entry yet: nothing to mark (a round of an entry made later finds no header, so no digest).
    await memory.announceDigest('user_001', 'session-5', 1);
    const first = await memory.append('user_001', 'session-5', turn('t1'));
    expect(first.digestRevision).toBe(0);
    await memory.announceDigest('user_001', 'session-5', 2);
    // An older revision marked late (a job that was redelivered) does not move it back; commits keep it.
    await memory.announceDigest('user_001', 'session-5', 1);
    await memory.append('user_001', 'session-5', turn('t2'));
    expect((await memory.load('user_001', 'session-5')).digestRevision).toBe(2);
  });

  it('gives no marks for an entry whose marks were never said complete (the records are read then)', async () => {
    const hot = new MemoryHotStore();
    await hot.write(
      'session-4',
      'session-4',
      { userId: 'user_001', messages: [], createdAt: 't', lastActivity: 't', stopped: ['t9'] },
      { kind: 'absent' },
    );
    const memory = createHotWorkingMemory({ hot, history, windowBytes: 10_000 });
    expect((await memory.load('user_001', 'session-4')).marks).toBeUndefined();
  });

  it('gives up with a conflict after the current limit of retries', async () => {
    const hot = alwaysRaced(new MemoryHotStore());
    const memory = createHotWorkingMemory({ hot, history, windowBytes: 10_000 });
    await expect(memory.append('user_001', 'session-2', turn('t1'))).rejects.toBeInstanceOf(ConflictError);
    // One write, then five retries, each after reading again.
    expect(hot.attempts).toBe(6);
  });
});
