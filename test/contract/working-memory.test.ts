// Working memory over the Cosmos DB hot store, against the local Cosmos DB with the real @azure/cosmos client (the
// long-term side is history's in-memory fakes): ordinals, idempotent and concurrent appends, rebuild on a miss,
// ownership, the byte window and its cost per turn, branches.
import type { CosmosClient, Database } from '@azure/cosmos';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import {
  createLocalCosmosClient,
  provisionCosmos,
  startLocalCosmos,
  type LocalCosmos,
} from '../../local/cosmos/local-cosmos.js';
import { assistantMessageId, userMessageId } from '../../shared/conversation/turn-ids.js';
import { HOT_CONVERSATIONS_CONTAINER, HOT_STORE_TTL_SECONDS } from '../../shared/chat/contracts/documents.js';
import { MAIN_BRANCH } from '../../shared/conversation/branches.js';
import type { ConversationMessage } from '../../shared/conversation/messages.js';
import { createHotWorkingMemory } from '../../shared/chat/hot-working-memory.js';
import { PathMovedError, type WorkingMemoryStore } from '../../shared/conversation/working-memory-store.js';
import { forkBranch } from '../../shared/conversation/branch-path.js';
import { fitHotWindow } from '../../shared/conversation/hot-window.js';
import { createCosmosHotStore } from '../../shared/conversation/adapters/cosmos-hot-store.js';
import type { HotStore } from '../../shared/conversation/hot-store.js';
import { COSMOS_DATABASE, cosmosContainers } from '../../shared/app/cosmos-containers.js';
import type { StoredMessage } from '../../shared/history/contracts.js';
import { ForbiddenError, NotReadyError } from '../../shared/errors.js';
import { MemoryConversationHeaders, MemoryConversationMessages } from '../support/in-memory-history.js';

let local: LocalCosmos;
let client: CosmosClient;
let database: Database;
let store: WorkingMemoryStore;
const headers = new MemoryConversationHeaders();
const longTerm = new MemoryConversationMessages();

beforeAll(async () => {
  local = await startLocalCosmos({ flushDelayMs: 10 });
  client = createLocalCosmosClient(local);
  await provisionCosmos(client, COSMOS_DATABASE, cosmosContainers);
  database = client.database(COSMOS_DATABASE);
  store = storeOn(hotStoreOf(database));
});

afterAll(async () => {
  client?.dispose();
  await local?.stop();
});

/** The Cosmos DB hot store over the database's hot container, with a conditional-read cache of its own. */
const hotStoreOf = (db: Database): HotStore =>
  createCosmosHotStore(db.container(HOT_CONVERSATIONS_CONTAINER));

/** Working memory over a hot store and the long-term history. */
function storeOn(hot: HotStore): WorkingMemoryStore {
  return createHotWorkingMemory({ hot, history: { headers, messages: longTerm }, windowBytes: WINDOW_BYTES });
}

/**
 * Messages as committed on the main line: each with its place in the conversation, and its turn's branch (which
 * follows the turn before it; `parent` names the one before the first).
 */
const numbered = (
  messages: readonly ConversationMessage[],
  from = 0,
  parent: string | null = null,
): ConversationMessage[] => {
  let previous = parent;
  let current: string | undefined;
  return messages.map((message, i) => {
    if (message.chatMessageId !== current) {
      if (current !== undefined) previous = current;
      current = message.chatMessageId;
    }
    return {
      ...message,
      ordinal: from + i,
      branch: { parentChatMessageId: previous, branchId: MAIN_BRANCH, gaps: [] },
    };
  });
};

/** A conversation as long-term history keeps it once the history worker stored every message. */
async function inLongTerm(userId: string, sessionId: string, messages: readonly ConversationMessage[]) {
  const stored: StoredMessage[] = numbered(messages).map((message) => ({
    ...message,
    ordinal: message.ordinal ?? 0,
    id: message.messageId,
    kind: 'message',
    userId,
    sessionId,
  }));
  await headers.touch({
    userId,
    sessionId,
    createdAt: messages[0]!.timestamp,
    lastActivity: messages.at(-1)!.timestamp,
    messageCount: messages.length,
    preview: messages.at(-1)!.content,
    firstUserText: messages[0]!.content,
  });
  await longTerm.put(stored);
  await headers.recordPersisted(userId, sessionId, {
    upTo: messages.length,
    at: messages.at(-1)!.timestamp,
    tokens: { prompt: 0, completion: 0, total: 0 },
    textTokens: 0,
  });
}

/** Room for about 60 of the test's small turns. */
const WINDOW_BYTES = 20_000;
const inWindow = (messages: Parameters<typeof fitHotWindow>[0]) => fitHotWindow(messages, WINDOW_BYTES);

/**
 * The hot store, except that its first `count` reads all complete before any of them returns (later reads pass
 * straight through): concurrent appends then all start from the same version, so all but one meet a conflict and
 * must reload and retry.
 */
function readingTogether(hot: HotStore, count: number): HotStore {
  let waiting: (() => void)[] = [];
  let open = false;
  const together = () =>
    open
      ? Promise.resolve()
      : new Promise<void>((resolve) => {
          waiting.push(resolve);
          if (waiting.length < count) return;
          open = true;
          waiting.forEach((release) => release());
          waiting = [];
        });
  return {
    read: async (sessionId, key) => {
      const entry = await hot.read(sessionId, key);
      await together();
      return entry;
    },
    list: (sessionId, prefix) => hot.list(sessionId, prefix),
    write: (sessionId, key, value, condition) => hot.write(sessionId, key, value, condition),
    deleteSession: (sessionId) => hot.deleteSession(sessionId),
  };
}

/** A message as the caller gave it, without what the commit added (its ordinal and branch). */
const withoutOrdinal = ({ ordinal: _ordinal, branch: _branch, ...message }: ConversationMessage) => message;

let turnCounter = 0;

/** A user message and its assistant reply for a new turn. */
function turn(text: string): [ConversationMessage, ConversationMessage] {
  turnCounter += 1;
  const chatMessageId = `turn-${turnCounter}`;
  const timestamp = new Date(Date.UTC(2025, 0, 1, 0, 0, turnCounter)).toISOString();
  return [
    { messageId: userMessageId(chatMessageId), chatMessageId, role: 'user', content: text, timestamp },
    {
      messageId: assistantMessageId(chatMessageId),
      chatMessageId,
      role: 'assistant',
      content: `reply to ${text}`,
      timestamp,
      finishReason: 'stop',
    },
  ];
}

describe('Cosmos DB working memory', () => {
  it('loads a new session as an empty conversation of the caller, with no digest', async () => {
    expect(await store.load('user-new', 'session-new')).toEqual({
      sessionId: 'session-new',
      userId: 'user-new',
      messages: [],
      messageCount: 0,
      digestRevision: 0,
    });
  });

  it('appends messages in order and loads them back', async () => {
    const first = turn('hello');
    const second = turn('again');
    const afterFirst = await store.append('user-a', 'session-a', first);
    expect(afterFirst.messages).toEqual(numbered(first));
    expect(afterFirst.messageCount).toBe(2);
    const afterSecond = await store.append('user-a', 'session-a', second);
    expect(afterSecond.messages).toEqual(numbered([...first, ...second]));
    expect(afterSecond.messageCount).toBe(4);

    expect(await store.load('user-a', 'session-a')).toMatchObject({
      sessionId: 'session-a',
      userId: 'user-a',
      messages: numbered([...first, ...second]),
      messageCount: 4,
      createdAt: first[0].timestamp,
    });
    const { resource } = await database
      .container(HOT_CONVERSATIONS_CONTAINER)
      .item('session-a', 'session-a')
      .read<{ createdAt: string; lastActivity: string }>();
    expect(resource).toMatchObject({ createdAt: first[0].timestamp, lastActivity: second[1].timestamp });
  });

  it('adds nothing twice when a commit is retried', async () => {
    const [question, answer] = turn('retried');
    await store.append('user-r', 'session-r', [question]);
    const retried = await store.append('user-r', 'session-r', [question, answer]);
    const again = await store.append('user-r', 'session-r', [question, answer]);
    // A retried message keeps the ordinal it was first given; no ordinal is spent twice.
    expect(retried.messages).toEqual(numbered([question, answer]));
    expect(again.messages).toEqual(numbered([question, answer]));
    expect(again.messageCount).toBe(2);
    expect((await store.load('user-r', 'session-r')).messages.map((m) => m.messageId)).toEqual([
      question.messageId,
      answer.messageId,
    ]);
    const [next] = turn('after the retry');
    expect((await store.append('user-r', 'session-r', [next])).messages.at(-1)?.ordinal).toBe(2);
  });

  it('lands both of two concurrent appends to one session that read the same version', async () => {
    const existing = turn('existing');
    await store.append('user-c', 'session-c', existing);
    const left = turn('left');
    const right = turn('right');
    const racing = storeOn(readingTogether(hotStoreOf(database), 2));
    await Promise.all([
      racing.append('user-c', 'session-c', left),
      racing.append('user-c', 'session-c', right),
    ]);
    const { messages, messageCount } = await store.load('user-c', 'session-c');
    expect(messages).toHaveLength(6);
    expect(messageCount).toBe(6);
    expect(messages.slice(0, 2)).toEqual(numbered(existing));
    expect(messages.map((m) => m.ordinal)).toEqual([0, 1, 2, 3, 4, 5]);
    expect(messages.map(withoutOrdinal)).toEqual(expect.arrayContaining([...left, ...right]));
  });

  it('lands every one of several concurrent appends that create a session', async () => {
    const turns = [turn('one'), turn('two'), turn('three'), turn('four')];
    const racing = storeOn(readingTogether(hotStoreOf(database), turns.length));
    await Promise.all(turns.map((messages) => racing.append('user-cc', 'session-cc', messages)));
    const { messages } = await store.load('user-cc', 'session-cc');
    expect(messages).toHaveLength(8);
    expect(messages.map((m) => m.ordinal)).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    expect(messages.map(withoutOrdinal)).toEqual(expect.arrayContaining(turns.flat()));
  });

  it('rebuilds from long-term history on a miss and writes the hot copy', async () => {
    const history = Array.from({ length: 110 }, (_, i) => turn(`old ${i}`)).flat();
    await inLongTerm('user-l', 'session-l', history);

    const loaded = await store.load('user-l', 'session-l');
    expect(loaded.messages).toEqual(inWindow(numbered(history)));
    expect(loaded.messages.length).toBeLessThan(history.length);
    expect(loaded).toMatchObject({ messageCount: 220, createdAt: history[0]!.timestamp });
    const hot = await database.container(HOT_CONVERSATIONS_CONTAINER).item('session-l', 'session-l').read();
    expect(hot.statusCode).toBe(200);
    expect(hot.resource).toMatchObject({
      userId: 'user-l',
      createdAt: history[0]!.timestamp,
      lastActivity: history.at(-1)!.timestamp,
      messageCount: 220,
    });
    // The window is longer than a tail: it went whole to a base, which the document names.
    const named = (hot.resource as { base: { id: string; skip: number }; messages: unknown[] }).base;
    expect(named.skip).toBe(0);
    expect((hot.resource as { messages: unknown[] }).messages).toEqual([]);
    const base = await database.container(HOT_CONVERSATIONS_CONTAINER).item(named.id, 'session-l').read();
    // Kept longer than the documents naming it, which live the hot store's TTL after their last write.
    expect(base.resource).toMatchObject({
      userId: 'user-l',
      messages: inWindow(numbered(history)),
      ttl: HOT_STORE_TTL_SECONDS + 12 * 60 * 60,
    });

    const next = turn('continued');
    const appended = await store.append('user-l', 'session-l', next);
    expect(appended.messages).toEqual(inWindow(numbered([...history, ...next])));
    expect(appended.messages.at(-1)?.ordinal).toBe(221);
  });

  it('continues a conversation from long-term history when the hot copy expired before an append', async () => {
    const history = turn('before expiry');
    await inLongTerm('user-x', 'session-x', history);
    const next = turn('after expiry');
    const appended = await store.append('user-x', 'session-x', next);
    expect(appended.messages).toEqual(numbered([...history, ...next]));
    expect(appended).toMatchObject({ messageCount: 4, createdAt: history[0].timestamp });
  });

  it('counts on from the header when the history worker has not stored the newest messages yet', async () => {
    const stored = turn('stored');
    await inLongTerm('user-lag', 'session-lag', stored);
    // Two more messages were committed (the header has them) before the hot copy went; the worker lags.
    await headers.touch({
      userId: 'user-lag',
      sessionId: 'session-lag',
      createdAt: stored[0].timestamp,
      lastActivity: stored[1].timestamp,
      messageCount: 4,
      preview: '',
      firstUserText: stored[0].content,
    });
    const appended = await store.append('user-lag', 'session-lag', turn('next'));
    expect(appended.messages.map((m) => m.ordinal)).toEqual([0, 1, 4, 5]);
    expect(appended.messageCount).toBe(6);
  });

  it('refuses to rebuild from a header of another user', async () => {
    await inLongTerm('owner-h', 'session-h', turn('theirs'));
    // A header store that answered with another user's header (the port must never; the store checks anyway).
    const foreign = { get: (_userId: string, sessionId: string) => headers.get('owner-h', sessionId) };
    const guarded = createHotWorkingMemory({
      hot: hotStoreOf(database),
      history: { headers: foreign, messages: longTerm },
      windowBytes: WINDOW_BYTES,
    });
    await expect(guarded.load('intruder-h', 'session-h')).rejects.toBeInstanceOf(ForbiddenError);
  });

  it("refuses another user's session", async () => {
    await store.append('owner', 'session-o', turn('mine'));
    await expect(store.load('intruder', 'session-o')).rejects.toBeInstanceOf(ForbiddenError);
    await expect(store.append('intruder', 'session-o', turn('theirs'))).rejects.toBeInstanceOf(
      ForbiddenError,
    );
    expect((await store.load('owner', 'session-o')).messages).toHaveLength(2);
  });

  it('keeps only the newest whole turns that fit its byte window, so the document stops growing', async () => {
    const all = Array.from({ length: 105 }, (_, i) => turn(`many ${i}`)).flat();
    await store.append('user-m', 'session-m', all.slice(0, 150));
    const capped = await store.append('user-m', 'session-m', all.slice(150));
    expect(capped.messages).toEqual(inWindow(numbered(all)));
    // The count is of the whole conversation, not of the window: ordinals go on from it.
    expect(capped.messageCount).toBe(210);
    expect(capped.messages.at(-1)?.ordinal).toBe(209);
    expect(capped.messages.length).toBeLessThan(all.length);
    expect(capped.messages[0]?.role).toBe('user');
    // The window counts each message's stored JSON (fitHotWindow's measure).
    const windowBytes = capped.messages.reduce((sum, m) => sum + Buffer.byteLength(JSON.stringify(m)), 0);
    expect(windowBytes).toBeLessThanOrEqual(WINDOW_BYTES);
    expect((await store.load('user-m', 'session-m')).messages).toEqual(inWindow(numbered(all)));
    expect((await storeOn(hotStoreOf(database)).load('user-m', 'session-m')).messageCount).toBe(210);
  });

  it('writes over the version the caller loaded without reading again, and reloads when it is stale', async () => {
    const loaded = await store.load('user-v', 'session-v');
    const first = await store.append('user-v', 'session-v', turn('one'), loaded);
    expect(first.version).toBeDefined();
    // Written with the version the first append returned: no read needed, and it is current.
    const second = await store.append('user-v', 'session-v', turn('two'), first);
    expect(second.messages).toHaveLength(4);
    // `first` is stale now: the write is refused, the store reloads and keeps both.
    const third = await store.append('user-v', 'session-v', turn('three'), first);
    expect(third.messages.map((m) => m.content)).toEqual([
      'one',
      'reply to one',
      'two',
      'reply to two',
      'three',
      'reply to three',
    ]);
  });

  it('costs bytes for the new messages only once the window is full: a conditional read and a patch', async () => {
    for (let i = 0; i < 60; i++) await store.append('user-b', 'session-b', turn(`filler ${i} `.repeat(20)));
    const window = Buffer.byteLength(JSON.stringify((await store.load('user-b', 'session-b')).messages));
    const next = turn('one more');
    local.resetStats();
    const loaded = await store.load('user-b', 'session-b');
    await store.append('user-b', 'session-b', next, loaded);
    const { requests, requestBytes, responseBytes } = local.stats();
    expect(requests).toBe(2);
    // A window of many kilobytes, but the turn moves about the size of its own messages (and what left the window).
    expect(window).toBeGreaterThan(10_000);
    const committed = (await storeOn(hotStoreOf(database)).load('user-b', 'session-b')).messages.slice(-2);
    expect(requestBytes + responseBytes).toBeLessThan(Buffer.byteLength(JSON.stringify(committed)) * 3);
    expect(committed.map(withoutOrdinal)).toEqual(next);
    expect(committed.map((m) => m.ordinal)).toEqual([120, 121]);
  });

  it("keeps the conversation's first system prompt apart from the window, through patches and trimming", async () => {
    const prompt = { content: 'You are helpful.', personalised: true, createdAt: '2025-01-01T00:00:00.000Z' };
    const first = await store.append('user-sp', 'session-sp', turn('opening'), undefined, {
      systemPrompt: prompt,
    });
    expect(first.systemPrompt).toEqual(prompt);
    // Later commits (patches) never replace it, even when handed another.
    const other = { ...prompt, content: 'another' };
    let latest = first;
    for (let i = 0; i < 70; i++)
      latest = await store.append('user-sp', 'session-sp', turn(`more ${i} `.repeat(10)), latest, {
        systemPrompt: other,
      });
    // The opening turn has left the window; the prompt has not.
    expect(latest.messages.some((m) => m.content === 'opening')).toBe(false);
    expect(latest.systemPrompt).toEqual(prompt);
    expect((await storeOn(hotStoreOf(database)).load('user-sp', 'session-sp')).systemPrompt).toEqual(prompt);
    const { resource } = await database
      .container(HOT_CONVERSATIONS_CONTAINER)
      .item('session-sp', 'session-sp')
      .read<{ systemPrompt?: unknown }>();
    expect(resource?.systemPrompt).toEqual(prompt);
  });

  it('takes the system prompt on the commit that first has one, and back from long-term history on a miss', async () => {
    const prompt = { content: 'Basic.', personalised: false, createdAt: '2025-01-01T00:00:00.000Z' };
    // A hot document stored without one (a conversation begun before prompts were kept) is patched to hold it.
    await store.append('user-sp2', 'session-sp2', turn('before'));
    const loaded = await store.load('user-sp2', 'session-sp2');
    expect(loaded.systemPrompt).toBeUndefined();
    const patched = await store.append('user-sp2', 'session-sp2', turn('after'), loaded, {
      systemPrompt: prompt,
    });
    expect(patched.systemPrompt).toEqual(prompt);
    expect((await storeOn(hotStoreOf(database)).load('user-sp2', 'session-sp2')).systemPrompt).toEqual(
      prompt,
    );

    // The hot copy expired: the rebuild reads the prompt history kept.
    const history = turn('kept long-term');
    await inLongTerm('user-sp3', 'session-sp3', history);
    await longTerm.putSystemPrompt('user-sp3', 'session-sp3', prompt);
    expect((await store.load('user-sp3', 'session-sp3')).systemPrompt).toEqual(prompt);
    const { resource } = await database
      .container(HOT_CONVERSATIONS_CONTAINER)
      .item('session-sp3', 'session-sp3')
      .read<{ systemPrompt?: unknown }>();
    expect(resource?.systemPrompt).toEqual(prompt);
  });

  describe('branches', () => {
    /** Commits `count` turns, each continuing the one before; their ids. */
    async function commitTurns(userId: string, sessionId: string, count: number, text = 'turn') {
      const ids: string[] = [];
      for (let i = 0; i < count; i += 1) {
        const messages = turn(`${text} ${i}`);
        ids.push(messages[0].chatMessageId);
        await store.append(userId, sessionId, messages);
      }
      return ids;
    }

    const ids = (messages: readonly ConversationMessage[] | undefined) => [
      ...new Set((messages ?? []).map((m) => m.chatMessageId)),
    ];

    it('commits a fork on its parent path, keeps the replaced turns off it, and moves back to them', async () => {
      const [a, b, c] = await commitTurns('user-f', 'session-f', 3);
      const replaced = await store.findTurn('user-f', 'session-f', b!);
      expect(replaced).toMatchObject({ chatMessageId: b, firstOrdinal: 2, lastOrdinal: 3 });
      expect(replaced?.branch).toEqual({ parentChatMessageId: a, branchId: MAIN_BRANCH, gaps: [] });
      const parent = await store.findTurn('user-f', 'session-f', a!);
      const onA = await store.showPath('user-f', 'session-f', parent!);
      expect(ids(onA.messages)).toEqual([a]);
      expect(ids(onA.offPath)).toEqual([b, c]);
      expect(onA.path).toMatchObject({ leafChatMessageId: a, lastOrdinal: 1 });

      const edit = turn('edited');
      const decided = forkBranch({
        fork: { replaces: b!, origin: 'edit' },
        newChatMessageId: edit[0].chatMessageId,
        replaced: replaced!.branch,
        parent,
        firstOrdinal: onA.messageCount,
      });
      const forked = await store.append('user-f', 'session-f', edit, onA, { branch: decided });
      expect(ids(forked.messages)).toEqual([a, edit[0].chatMessageId]);
      expect(forked.messages.slice(2).map((m) => [m.ordinal, m.branch])).toEqual([
        [6, { ...decided, gaps: [{ from: 2, to: 6 }] }],
        [7, { ...decided, gaps: [{ from: 2, to: 6 }] }],
      ]);
      expect(await storeOn(hotStoreOf(database)).load('user-f', 'session-f')).toEqual(forked);

      // Back to c, from the messages working memory kept off the path (history has stored none of them).
      const back = await store.showPath(
        'user-f',
        'session-f',
        (await store.findTurn('user-f', 'session-f', c!))!,
      );
      expect(ids(back.messages)).toEqual([a, b, c]);
      expect(ids(back.offPath)).toEqual([edit[0].chatMessageId]);
      // A commit whose parent is no longer the leaf (the user switched while it ran) is refused, not misplaced.
      await expect(
        store.append('user-f', 'session-f', turn('late'), back, {
          branch: { ...decided, parentChatMessageId: a! },
        }),
      ).rejects.toBeInstanceOf(PathMovedError);
      // A retried commit of the fork adds nothing, wherever the turn is now.
      expect((await store.append('user-f', 'session-f', edit, back, { branch: decided })).messageCount).toBe(
        8,
      );
    });

    it('fills the window of another path from long-term history along it, only as far as the window reaches', async () => {
      const history = Array.from({ length: 110 }, (_, i) => turn(`long ${i}`)).flat();
      await inLongTerm('user-lp', 'session-lp', history);
      await store.load('user-lp', 'session-lp');
      const leaf = await store.findTurn('user-lp', 'session-lp', history[199]!.chatMessageId);
      expect(leaf).toMatchObject({ firstOrdinal: 198, lastOrdinal: 199 });
      local.resetStats();
      const pages: unknown[] = [];
      const page = longTerm.page.bind(longTerm);
      longTerm.page = (...args) => {
        pages.push(args[2]);
        return page(...args);
      };
      const moved = await store.showPath('user-lp', 'session-lp', leaf!).finally(() => {
        longTerm.page = page;
      });
      expect(moved.messages).toEqual(inWindow(numbered(history).slice(0, 200)));
      // A page or two of long-term messages, from the leaf down; on the hot side, a read, the new window's base
      // (the path moved: it does not follow from the old one) and the write.
      expect(pages.length).toBeLessThanOrEqual(2);
      expect(pages[0]).toMatchObject({ order: 'desc', before: 200 });
      expect(local.stats().requests).toBeLessThanOrEqual(3);
      // What left the window is stored long-term already: nothing is kept off the path.
      expect(moved.offPath ?? []).toEqual([]);
    });

    it('refuses a move while a message of the path is neither in working memory nor stored (409, retry)', async () => {
      const [first] = await commitTurns('user-nr', 'session-nr', 2);
      const leaf = await store.findTurn('user-nr', 'session-nr', first!);
      // The hot copy is lost before the history worker stored anything; the header knows the turns.
      await database.container(HOT_CONVERSATIONS_CONTAINER).item('session-nr', 'session-nr').delete();
      await headers.touch({
        userId: 'user-nr',
        sessionId: 'session-nr',
        createdAt: 't',
        lastActivity: 't',
        messageCount: 4,
        preview: '',
        firstUserText: 'turn 0',
      });
      await expect(store.showPath('user-nr', 'session-nr', leaf!)).rejects.toBeInstanceOf(NotReadyError);
    });

    it('finds a turn from before branches in long-term history, after the turn before it', async () => {
      const history = [...turn('older'), ...turn('old')];
      const items: StoredMessage[] = history.map((message, ordinal) => ({
        ...message,
        ordinal,
        id: message.messageId,
        kind: 'message',
        userId: 'user-ft',
        sessionId: 'session-ft',
      }));
      await longTerm.put(items);
      const found = await store.findTurn('user-ft', 'session-ft', history[2]!.chatMessageId);
      expect(found).toMatchObject({ firstOrdinal: 2, lastOrdinal: 3 });
      expect(found?.branch).toEqual({
        parentChatMessageId: history[0]!.chatMessageId,
        branchId: MAIN_BRANCH,
        gaps: [],
      });
      expect(await store.findTurn('user-ft', 'session-ft', 'unknown')).toBeUndefined();
      expect(await store.findTurn('user-other', 'session-ft', history[2]!.chatMessageId)).toBeUndefined();
    });

    it('rebuilds a miss along the path the header names, leaving the other branches out', async () => {
      const [a, b] = await commitTurns('user-rp', 'session-rp', 2);
      const parent = await store.findTurn('user-rp', 'session-rp', a!);
      const onA = await store.showPath('user-rp', 'session-rp', parent!);
      const replaced = await store.findTurn('user-rp', 'session-rp', b!);
      const edit = turn('edited');
      const decided = forkBranch({
        fork: { replaces: b!, origin: 'edit' },
        newChatMessageId: edit[0].chatMessageId,
        replaced: replaced!.branch,
        parent,
        firstOrdinal: onA.messageCount,
      });
      const forked = await store.append('user-rp', 'session-rp', edit, onA, { branch: decided });
      // The history worker stored every message and the header has the path; then the hot copy expires.
      const all = [...forked.messages, ...(forked.offPath ?? [])];
      await longTerm.put(
        all.map((m) => ({
          ...m,
          ordinal: m.ordinal!,
          id: m.messageId,
          kind: 'message',
          userId: 'user-rp',
          sessionId: 'session-rp',
        })),
      );
      await headers.touch({
        userId: 'user-rp',
        sessionId: 'session-rp',
        createdAt: 't',
        lastActivity: 't',
        messageCount: 6,
        preview: '',
        firstUserText: 'turn 0',
        opensConversation: true,
        path: { ...forked.path!, lastOrdinal: 5 },
      });
      await headers.recordPersisted('user-rp', 'session-rp', {
        upTo: 6,
        at: 't',
        tokens: { prompt: 0, completion: 0, total: 0 },
        textTokens: 0,
      });
      await database.container(HOT_CONVERSATIONS_CONTAINER).item('session-rp', 'session-rp').delete();
      const rebuilt = await storeOn(hotStoreOf(database)).load('user-rp', 'session-rp');
      expect(ids(rebuilt.messages)).toEqual([a, edit[0].chatMessageId]);
      expect(rebuilt.path?.leafChatMessageId).toBe(edit[0].chatMessageId);
      // The next turn continues the edit's branch.
      const next = await store.append('user-rp', 'session-rp', turn('next'), rebuilt);
      expect(next.messages.at(-1)?.branch).toEqual({
        parentChatMessageId: edit[0].chatMessageId,
        branchId: edit[0].chatMessageId,
        gaps: [{ from: 2, to: 4 }],
      });
    });
  });

  it('reads and writes only the document whose id is the session id', async () => {
    const hot = database.container(HOT_CONVERSATIONS_CONTAINER);
    await hot.items.create({
      id: 'session-d:turn-state',
      sessionId: 'session-d',
      userId: 'user-d',
      other: 1,
    });
    expect((await store.load('user-d', 'session-d')).messages).toEqual([]);
    await store.append('user-d', 'session-d', turn('beside'));
    const { resource } = await hot.item('session-d:turn-state', 'session-d').read<{ other: number }>();
    expect(resource?.other).toBe(1);
  });
});
