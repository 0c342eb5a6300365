// Working memory kept as an immutable base and a small tail, over the hot store's in-memory twin: what callers see
// is the window a single document would hold, a turn writes the tail only, a full tail or a moved path writes a new
// base, the window's front leaves through the base's skip count, a lost base is rebuilt, a cached base is not read.
import { describe, expect, it } from 'vitest';
import {
  MemoryConversationHeaders,
  MemoryConversationMessages,
} from '../../test/support/in-memory-history.js';
import { MemoryHotStore } from '../../test/support/in-memory-hot-store.js';
import type { HotStore } from '../conversation/hot-store.js';
import { storedBytes } from '../conversation/hot-window.js';
import type { ConversationMessage } from '../conversation/messages.js';
import { assistantMessageId, userMessageId } from '../conversation/turn-ids.js';
import type { WorkingMemory } from '../conversation/working-memory-store.js';
import { createHotWorkingMemory } from './hot-working-memory.js';
import { placeWindow, type CompactionPolicy } from './hot-window-documents.js';
import { WorkingMemoryBaseCache } from './working-memory-bases.js';

const WINDOW_BYTES = 3_000;
const TAIL_BYTES = 1_000;
const USER = 'user_001';

const turn = (id: string): ConversationMessage[] => [
  {
    messageId: userMessageId(id),
    chatMessageId: id,
    role: 'user',
    content: `question ${id}`,
    timestamp: '2026-11-26T10:00:00.000Z',
  },
  {
    messageId: assistantMessageId(id),
    chatMessageId: id,
    role: 'assistant',
    content: `answer ${id}`,
    timestamp: '2026-11-26T10:00:01.000Z',
    finishReason: 'stop',
  },
];

/** The twin, counting the reads and writes of working memory bases. */
function counting(hot: HotStore, options: { hideBases?: boolean } = {}) {
  const counts = { baseReads: 0, baseWrites: 0, reads: 0 };
  const isBase = (key: string) => key.startsWith('wm-base.');
  const store: HotStore = {
    async read(sessionId, key) {
      counts.reads += 1;
      if (isBase(key)) counts.baseReads += 1;
      return isBase(key) && options.hideBases === true ? undefined : hot.read(sessionId, key);
    },
    list: (sessionId, prefix) => hot.list(sessionId, prefix),
    write(sessionId, key, value, condition, writeOptions) {
      if (isBase(key)) counts.baseWrites += 1;
      return hot.write(sessionId, key, value, condition, writeOptions);
    },
    deleteSession: (sessionId) => hot.deleteSession(sessionId),
  };
  return { store, counts };
}

function stores(hot: HotStore, bases = new WorkingMemoryBaseCache()) {
  const history = { headers: new MemoryConversationHeaders(), messages: new MemoryConversationMessages() };
  return {
    split: createHotWorkingMemory({ hot, history, windowBytes: WINDOW_BYTES, tailBytes: TAIL_BYTES, bases }),
    /** The same window kept in one document (a tail that never fills), to compare with. */
    whole: createHotWorkingMemory({
      hot: new MemoryHotStore(),
      history,
      windowBytes: WINDOW_BYTES,
      tailBytes: Number.MAX_SAFE_INTEGER,
    }),
  };
}

async function stored(hot: MemoryHotStore, sessionId: string) {
  const entry = await hot.read(sessionId, sessionId);
  return entry?.value as {
    messages: ConversationMessage[];
    base?: { id: string; skip: number; count: number };
  };
}

describe('working memory as a base and a tail', () => {
  it('gives the window one document would, over many turns, writing a base only when the tail fills', async () => {
    const hot = new MemoryHotStore();
    const { store, counts } = counting(hot);
    const { split, whole } = stores(store);
    let splitMemory: WorkingMemory | undefined;
    let wholeMemory: WorkingMemory | undefined;
    for (let i = 0; i < 40; i += 1) {
      splitMemory = await split.append(USER, 'session-1', turn(`t${i}`), splitMemory);
      wholeMemory = await whole.append(USER, 'session-1', turn(`t${i}`), wholeMemory);
      expect(splitMemory.messages).toEqual(wholeMemory.messages);
      expect(splitMemory.messageCount).toBe(wholeMemory.messageCount);
      const document = await stored(hot, 'session-1');
      expect(storedBytes(document.messages)).toBeLessThanOrEqual(TAIL_BYTES);
    }
    // 40 turns of about 300 bytes: a new base each time the tail passed 1,000 bytes, not one a turn.
    expect(counts.baseWrites).toBeGreaterThan(5);
    expect(counts.baseWrites).toBeLessThan(20);
    // Every base this store wrote was cached: none was read.
    expect(counts.baseReads).toBe(0);
    expect((await split.load(USER, 'session-1')).messages).toEqual(wholeMemory!.messages);
  });

  it("drops the window's oldest messages by the base's skip count, without writing the base again", async () => {
    const hot = new MemoryHotStore();
    const { store, counts } = counting(hot);
    // A tail as large as the window: a turn never fills it before the window slides.
    const history = { headers: new MemoryConversationHeaders(), messages: new MemoryConversationMessages() };
    const split = createHotWorkingMemory({ hot: store, history, windowBytes: 2_000, tailBytes: 1_200 });
    // Turns until one writes a new base (the window is full by then), then one more.
    let memory: WorkingMemory | undefined;
    let turns = 0;
    for (let wroteBase = false; !wroteBase || turns < 8; turns += 1) {
      const writes = counts.baseWrites;
      memory = await split.append(USER, 'session-2', turn(`t${turns}`), memory);
      wroteBase = counts.baseWrites > writes;
    }
    const before = (await stored(hot, 'session-2')).base;
    const writes = counts.baseWrites;
    memory = await split.append(USER, 'session-2', turn(`t${turns}`), memory);
    turns += 1;
    const after = await stored(hot, 'session-2');
    expect(after.base?.id).toBe(before!.id);
    expect(after.base!.skip).toBeGreaterThan(before!.skip);
    expect(counts.baseWrites).toBe(writes);
    // What one document would hold after the same turns.
    const whole = createHotWorkingMemory({ hot: new MemoryHotStore(), history, windowBytes: 2_000 });
    let expected: WorkingMemory | undefined;
    for (let i = 0; i < turns; i += 1)
      expected = await whole.append(USER, 'session-2', turn(`t${i}`), expected);
    expect(memory.messages).toEqual(expected!.messages);
    expect((await split.load(USER, 'session-2')).messages).toEqual(expected!.messages);
  });

  it('reads a base it does not hold once, and a cached one not at all', async () => {
    const hot = new MemoryHotStore();
    const { store: writer } = counting(hot);
    const { split } = stores(writer);
    let memory: WorkingMemory | undefined;
    for (let i = 0; i < 8; i += 1) memory = await split.append(USER, 'session-3', turn(`t${i}`), memory);
    expect((await stored(hot, 'session-3')).base).toBeDefined();

    // Another process: its first load reads the base, the next ones take it from its cache.
    const { store: reader, counts } = counting(hot);
    const other = stores(reader).split;
    expect((await other.load(USER, 'session-3')).messages).toEqual(memory!.messages);
    expect(counts).toMatchObject({ baseReads: 1, reads: 2 });
    expect((await other.load(USER, 'session-3')).messages).toEqual(memory!.messages);
    expect(counts).toMatchObject({ baseReads: 1, reads: 3 });
  });

  it('rebuilds a window whose base is gone from long-term history and the tail, and writes it anew', async () => {
    const hot = new MemoryHotStore();
    const { split } = stores(hot);
    let memory: WorkingMemory | undefined;
    for (let i = 0; i < 8; i += 1) memory = await split.append(USER, 'session-4', turn(`t${i}`), memory);
    const named = (await stored(hot, 'session-4')).base;
    expect(named).toBeDefined();

    // Long-term history holds nothing of it (not stored yet, say): what is left is the tail.
    const { store, counts } = counting(hot, { hideBases: true });
    const other = stores(store).split;
    const tail = (await stored(hot, 'session-4')).messages;
    const loaded = await other.load(USER, 'session-4');
    expect(counts.baseReads).toBe(1);
    expect(loaded.messages.map((m) => m.messageId)).toEqual(tail.map((m) => m.messageId));
    expect(loaded.messageCount).toBe(memory!.messageCount);
    // Written over the version read: the document names no base now, and a turn goes on from it.
    expect((await stored(hot, 'session-4')).base).toBeUndefined();
    const next = await other.append(USER, 'session-4', turn('t8'), loaded);
    expect(next.messages.at(-1)?.ordinal).toBe(memory!.messageCount + 1);
  });
});

describe('placing a window over a base', () => {
  const policy = (now = Date.parse('2026-11-26T12:00:00.000Z')): CompactionPolicy => ({
    tailBytes: TAIL_BYTES,
    maxBaseAgeMs: 12 * 60 * 60 * 1000,
    now: () => now,
    newBaseId: () => 'wm-base.new',
  });
  const messages = Array.from({ length: 8 }, (_, i) => turn(`p${i}`)).flat();
  const current: WorkingMemory = {
    sessionId: 's',
    userId: USER,
    messages: messages.slice(0, 14),
    messageCount: 14,
    layout: { baseId: 'wm-base.old', count: 12, skip: 0, createdAt: '2026-11-26T10:00:00.000Z' },
  };

  it('keeps the base for a window that drops its front and grows its tail', () => {
    const next = { ...current, messages: messages.slice(2, 16) };
    const placed = placeWindow(current, next, policy());
    expect(placed.base).toBeUndefined();
    expect(placed.memory.layout).toEqual({ ...current.layout, skip: 2 });
  });

  it('writes a new base for a path that does not continue the base (an edit, a switch)', () => {
    const next = { ...current, messages: [...messages.slice(0, 6), ...turn('fork')] };
    const placed = placeWindow(current, next, policy());
    expect(placed.base).toMatchObject({ id: 'wm-base.new', messages: next.messages });
    expect(placed.memory.layout).toMatchObject({ baseId: 'wm-base.new', count: 8, skip: 0 });
  });

  it('writes a new base when the base is older than its bound, whatever the tail', () => {
    const next = { ...current, messages: messages.slice(0, 16) };
    const placed = placeWindow(current, next, policy(Date.parse('2026-11-26T22:00:00.001Z')));
    expect(placed.base?.messages).toEqual(next.messages);
  });

  it('keeps no base once the window has left it and fits in a tail', () => {
    const next = { ...current, messages: messages.slice(12, 16) };
    const placed = placeWindow(current, next, policy());
    expect(placed.base).toBeUndefined();
    expect(placed.memory.layout).toBeUndefined();
  });
});
