// Working memory's retry and rebuild policy over the hot store's in-memory twin: a miss rebuilt from long-term
// history is written only if still absent, and an append that keeps meeting newer versions gives up with a 409.
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
import { createHotWorkingMemory } from './hot-working-memory.js';

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
    expect(hot.writes.map((w) => w.condition)).toEqual(['absent', 'version']);
  });

  it('gives up with a conflict after the current limit of retries', async () => {
    const hot = alwaysRaced(new MemoryHotStore());
    const memory = createHotWorkingMemory({ hot, history, windowBytes: 10_000 });
    await expect(memory.append('user_001', 'session-2', turn('t1'))).rejects.toBeInstanceOf(ConflictError);
    // One write, then five retries, each after reading again.
    expect(hot.attempts).toBe(6);
  });
});
