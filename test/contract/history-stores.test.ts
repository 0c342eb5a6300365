// Contract tests of the history area's Cosmos DB adapters against the local Cosmos DB with the real
// @azure/cosmos client: each port method's semantics, isolation between users, redelivery and paging.
import type { CosmosClient, Database } from '@azure/cosmos';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import {
  createLocalCosmosClient,
  provisionCosmos,
  startLocalCosmos,
  type LocalCosmos,
} from '../../local/cosmos/local-cosmos.js';
import { COSMOS_DATABASE, cosmosContainers } from '../../shared/app/cosmos-containers.js';
import { ValidationError } from '../../shared/errors.js';
import { createHistoryStores, type HistoryStores } from '../../shared/history/adapters/history-adapters.js';
import {
  CONVERSATION_MESSAGES_CONTAINER,
  CONVERSATIONS_CONTAINER,
  FIRST_MESSAGE_TITLE_CHARS,
  type ExchangeEntry,
  type SessionDigest,
  type StoredMessage,
} from '../../shared/history/contracts.js';
import type { ConversationHeaders, HeaderTouch } from '../../shared/history/conversation-headers.js';
import {
  MemoryConversationHeaders,
  MemoryConversationMessages,
  MemorySessionMemory,
} from '../support/in-memory-history.js';

let local: LocalCosmos;
let client: CosmosClient;
let database: Database;
let stores: HistoryStores;

beforeAll(async () => {
  local = await startLocalCosmos();
  client = createLocalCosmosClient(local);
  await provisionCosmos(client, COSMOS_DATABASE, cosmosContainers);
  database = client.database(COSMOS_DATABASE);
  stores = createHistoryStores(database, { fullText: 'in-process' });
});

afterAll(async () => {
  client?.dispose();
  await local?.stop();
});

const at = (minute: number) => new Date(Date.UTC(2025, 0, 1, 0, minute)).toISOString();

function touchOf(userId: string, sessionId: string, messageCount: number, extra: Partial<HeaderTouch> = {}) {
  return {
    userId,
    sessionId,
    createdAt: at(0),
    lastActivity: at(messageCount),
    messageCount,
    preview: `preview ${messageCount}`,
    firstUserText: `first question of ${sessionId}`,
    ...extra,
  } satisfies HeaderTouch;
}

function message(
  userId: string,
  sessionId: string,
  ordinal: number,
  content = `message ${ordinal}`,
): StoredMessage {
  const chatMessageId = `turn-${Math.floor(ordinal / 2)}`;
  const role = ordinal % 2 === 0 ? 'user' : 'assistant';
  return {
    id: `${chatMessageId}_${role}`,
    kind: 'message',
    userId,
    sessionId,
    messageId: `${chatMessageId}_${role}`,
    chatMessageId,
    role,
    content,
    timestamp: at(ordinal),
    ordinal,
  };
}

function entry(ordinal: number, line: string, tags: string[]): ExchangeEntry {
  return { exchangeId: `turn-${ordinal / 2}`, ordinal, line, tags, at: at(ordinal) };
}

const digest = (summary: string): SessionDigest => ({
  summary,
  summarizedThrough: 4,
  recentExchanges: [entry(0, 'Asked about Paris', ['travel'])],
  summarizedTokens: 240,
  updatedAt: at(9),
  gaps: [],
});

describe('Cosmos DB conversation headers', () => {
  it('creates a header from the first commit, titled from the first message, and moves it only forward', async () => {
    const long = `${'Please explain how the history worker '.repeat(5)} in detail`;
    await stores.headers.touch(touchOf('hu-1', 'hs-1', 2, { firstUserText: `  ${long}\n` }));
    const created = await stores.headers.get('hu-1', 'hs-1');
    expect(created).toMatchObject({
      sessionId: 'hs-1',
      titleSource: 'first-message',
      createdAt: at(0),
      lastActivity: at(2),
      messageCount: 2,
      preview: 'preview 2',
      persistedCount: 0,
      persistedAt: null,
      tokens: { prompt: 0, completion: 0, total: 0 },
      textTokens: 0,
    });
    expect(created?.title.length).toBeLessThanOrEqual(FIRST_MESSAGE_TITLE_CHARS);
    expect(created?.title).toMatch(/^Please explain how the history worker .*…$/);

    await stores.headers.touch(touchOf('hu-1', 'hs-1', 4, { firstUserText: 'ignored: the header exists' }));
    await stores.headers.touch(touchOf('hu-1', 'hs-1', 3)); // a late, older commit
    expect(await stores.headers.get('hu-1', 'hs-1')).toMatchObject({
      title: created?.title,
      lastActivity: at(4),
      messageCount: 4,
      preview: 'preview 4',
    });
  });

  it('lands one header when the first commits of a conversation race', async () => {
    await Promise.all([2, 4, 3].map((count) => stores.headers.touch(touchOf('hu-race', 'hs-race', count))));
    expect(await stores.headers.get('hu-race', 'hs-race')).toMatchObject({ messageCount: 4 });
  });

  it("never answers with another user's header, even under the same session id", async () => {
    await stores.headers.touch(touchOf('hu-2', 'hs-shared', 2, { firstUserText: 'mine' }));
    await stores.headers.touch(touchOf('hu-3', 'hs-shared', 6, { firstUserText: 'theirs' }));
    expect(await stores.headers.get('hu-2', 'hs-shared')).toMatchObject({ title: 'mine', messageCount: 2 });
    expect(await stores.headers.get('hu-3', 'hs-shared')).toMatchObject({ title: 'theirs', messageCount: 6 });
    expect(await stores.headers.get('hu-4', 'hs-shared')).toBeUndefined();
    expect(await stores.headers.setTitle('hu-4', 'hs-shared', 'guess', 'user')).toBe('missing');
    expect(await stores.headers.delete('hu-4', 'hs-shared')).toBe(false);
    expect(await stores.headers.get('hu-2', 'hs-shared')).toMatchObject({ title: 'mine' });
  });

  it('records a persisted turn once, however often it is redelivered', async () => {
    await stores.headers.touch(touchOf('hu-5', 'hs-5', 4));
    const turn = { upTo: 2, at: at(3), tokens: { prompt: 100, completion: 20, total: 120 }, textTokens: 40 };
    expect(await stores.headers.recordPersisted('hu-5', 'hs-5', turn)).toBe('recorded');
    expect(await stores.headers.recordPersisted('hu-5', 'hs-5', turn)).toBe('already-recorded');
    const next = { upTo: 4, at: at(5), tokens: { prompt: 200, completion: 30, total: 230 }, textTokens: 25 };
    expect(await stores.headers.recordPersisted('hu-5', 'hs-5', next)).toBe('recorded');
    expect(await stores.headers.recordPersisted('hu-5', 'hs-5', turn)).toBe('already-recorded');
    expect(await stores.headers.get('hu-5', 'hs-5')).toMatchObject({
      persistedCount: 4,
      persistedAt: at(5),
      tokens: { prompt: 300, completion: 50, total: 350 },
      textTokens: 65,
      messageCount: 4,
    });
    expect(await stores.headers.recordPersisted('hu-5', 'hs-gone', turn)).toBe('missing');
  });

  it('records a turn only on the header read, never on one a delete marked or made again', async () => {
    for (const headers of [stores.headers, new MemoryConversationHeaders()] as ConversationHeaders[]) {
      const turn = (upTo: number) => ({
        upTo,
        at: at(upTo),
        tokens: { prompt: 1, completion: 1, total: 2 },
        textTokens: 3,
      });
      await headers.touch(touchOf('hu-6', 'hs-6', 6));
      const first = await headers.read('hu-6', 'hs-6');
      if (first === undefined) throw new Error('The header just made was not read.');
      expect(first.header).toEqual(await headers.get('hu-6', 'hs-6'));
      const { incarnation } = first;
      expect(await headers.recordPersisted('hu-6', 'hs-6', { ...turn(2), incarnation })).toBe('recorded');

      // Marked by a delete: missing to readers, refusing the record, and kept through the other writes.
      expect(await headers.markDeleting('hu-6', 'hs-6')).toBe(true);
      expect(await headers.get('hu-6', 'hs-6')).toBeUndefined();
      expect(await headers.read('hu-6', 'hs-6')).toBeUndefined();
      expect(await headers.recordPersisted('hu-6', 'hs-6', { ...turn(4), incarnation })).toBe(
        'already-recorded',
      );
      await headers.touch(touchOf('hu-6', 'hs-6', 8));
      expect(await headers.setTitle('hu-6', 'hs-6', 'A title', 'model')).toBe('set');
      expect(await headers.setProject('hu-6', 'hs-6', `proj-${'a'.repeat(32)}`)).toBe(true);
      expect(await headers.read('hu-6', 'hs-6')).toBeUndefined();
      expect(await headers.recordPersisted('hu-6', 'hs-6', turn(4))).toBe('already-recorded');

      // Removed, then made again by a late touch: another header, which a record held to the first refuses.
      expect(await headers.delete('hu-6', 'hs-6')).toBe(true);
      expect(await headers.markDeleting('hu-6', 'hs-6')).toBe(false);
      await headers.touch(touchOf('hu-6', 'hs-6', 8));
      const again = await headers.read('hu-6', 'hs-6');
      if (again === undefined) throw new Error('The header made again was not read.');
      expect(again.header).toMatchObject({ persistedCount: 0, messageCount: 8 });
      expect(again.incarnation).not.toBe(incarnation);
      expect(await headers.recordPersisted('hu-6', 'hs-6', { ...turn(4), incarnation })).toBe(
        'already-recorded',
      );
      expect(
        await headers.recordPersisted('hu-6', 'hs-6', { ...turn(4), incarnation: again.incarnation }),
      ).toBe('recorded');
      expect(await headers.get('hu-6', 'hs-6')).toMatchObject({ persistedCount: 4 });
      await headers.delete('hu-6', 'hs-6');
    }
  });

  it('reads a header stored before textTokens existed as 0, and counts from there', async () => {
    await stores.headers.touch(touchOf('hu-old', 'hs-old', 2));
    const container = database.container(CONVERSATIONS_CONTAINER);
    const { resource } = await container.item('hs-old', 'hu-old').read<Record<string, unknown>>();
    const { textTokens, ...older } = resource ?? { textTokens: undefined };
    expect(textTokens).toBe(0);
    await container.item('hs-old', 'hu-old').replace(older);
    expect(await stores.headers.get('hu-old', 'hs-old')).toMatchObject({ textTokens: 0 });
    const turn = { upTo: 2, at: at(3), tokens: { prompt: 1, completion: 1, total: 2 }, textTokens: 30 };
    expect(await stores.headers.recordPersisted('hu-old', 'hs-old', turn)).toBe('recorded');
    expect(await stores.headers.get('hu-old', 'hs-old')).toMatchObject({ persistedCount: 2, textTokens: 30 });
  });

  it('keeps the active path a commit or a switch gives it, and the mark of a conversation that forked', async () => {
    const path = (leaf: string, lastOrdinal: number, gaps: { from: number; to: number }[] = []) => ({
      leafChatMessageId: leaf,
      branch: { parentChatMessageId: 'p', branchId: leaf, gaps },
      lastOrdinal,
    });
    await stores.headers.touch(
      touchOf('hu-path', 'hs-path', 2, { opensConversation: true, path: path('a', 1) }),
    );
    expect(await stores.headers.get('hu-path', 'hs-path')).toMatchObject({ path: path('a', 1) });
    expect((await stores.headers.get('hu-path', 'hs-path'))?.branched).toBeUndefined();
    const forked = path('b', 3, [{ from: 0, to: 2 }]);
    await stores.headers.touch(touchOf('hu-path', 'hs-path', 4, { path: forked, branched: true }));
    expect(await stores.headers.get('hu-path', 'hs-path')).toMatchObject({ path: forked, branched: true });
    // A later commit on a path without forks leaves the mark: the conversation has alternatives still.
    await stores.headers.touch(touchOf('hu-path', 'hs-path', 6, { path: path('c', 5) }));
    expect(await stores.headers.get('hu-path', 'hs-path')).toMatchObject({
      path: path('c', 5),
      branched: true,
    });
    const shown = { path: forked, preview: 'shown', messageCount: 6 };
    expect(await stores.headers.setPath('hu-path', 'hs-path', shown)).toBe('set');
    expect(await stores.headers.get('hu-path', 'hs-path')).toMatchObject({
      path: forked,
      preview: 'shown',
      messageCount: 6,
    });
    expect(await stores.headers.setPath('hu-other', 'hs-path', shown)).toBe('missing');
    // A commit landed after the switch moved working memory: its path, the newer one, stays.
    await stores.headers.touch(touchOf('hu-path', 'hs-path', 8, { path: path('d', 7) }));
    expect(await stores.headers.setPath('hu-path', 'hs-path', { ...shown, preview: 'late' })).toBe('moved');
    expect(await stores.headers.get('hu-path', 'hs-path')).toMatchObject({
      path: path('d', 7),
      messageCount: 8,
    });
  });

  it("never lets a model's title replace the user's", async () => {
    await stores.headers.touch(touchOf('hu-6', 'hs-6', 2));
    expect(await stores.headers.setTitle('hu-6', 'hs-6', 'Model title', 'model')).toBe('set');
    expect(await stores.headers.get('hu-6', 'hs-6')).toMatchObject({
      title: 'Model title',
      titleSource: 'model',
    });
    expect(await stores.headers.setTitle('hu-6', 'hs-6', 'My title', 'user')).toBe('set');
    expect(await stores.headers.setTitle('hu-6', 'hs-6', 'Later model title', 'model')).toBe('kept');
    await stores.headers.touch(touchOf('hu-6', 'hs-6', 4));
    expect(await stores.headers.get('hu-6', 'hs-6')).toMatchObject({
      title: 'My title',
      titleSource: 'user',
    });
    expect(await stores.headers.setTitle('hu-6', 'hs-6', 'Renamed', 'user')).toBe('set');
    expect(await stores.headers.setTitle('hu-6', 'hs-none', 'x', 'model')).toBe('missing');
  });

  it('lists newest activity first, a page at a time, without repeats or gaps', async () => {
    for (let i = 0; i < 7; i += 1) await stores.headers.touch(touchOf('hu-list', `hl-${i}`, 10 + i));
    await stores.headers.touch(touchOf('hu-other', 'hl-3', 99)); // another user, same session id
    const seen: string[] = [];
    let continuationToken: string | undefined;
    let pages = 0;
    do {
      const page = await stores.headers.list('hu-list', {
        limit: 3,
        ...(continuationToken === undefined ? {} : { continuationToken }),
      });
      expect(page.headers.length).toBeLessThanOrEqual(3);
      expect(page.headers.every((header) => header.userId === 'hu-list')).toBe(true);
      seen.push(...page.headers.map((header) => header.sessionId));
      continuationToken = page.continuationToken;
      pages += 1;
    } while (continuationToken !== undefined && pages < 10);
    expect(seen).toEqual(['hl-6', 'hl-5', 'hl-4', 'hl-3', 'hl-2', 'hl-1', 'hl-0']);
    expect(pages).toBeLessThanOrEqual(4);
  });

  it('refuses a continuation token that is not one of this list', async () => {
    for (let i = 0; i < 3; i += 1) await stores.headers.touch(touchOf('hu-token', `ht-${i}`, 1 + i));
    const first = await stores.headers.list('hu-token', { limit: 1 });
    expect(first.continuationToken).toBeDefined();
    const token = first.continuationToken ?? '';
    const inner = JSON.parse(Buffer.from(token, 'base64url').toString('utf8')) as Record<string, unknown>;
    const forged = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
    for (const bad of [
      'garbage',
      '',
      forged({ ...inner, v: 2 }),
      forged({ offset: 3 }),
      forged({ ...inner, cosmos: '' }),
      Buffer.from('not json').toString('base64url'),
    ])
      await expect(stores.headers.list('hu-token', { limit: 1, continuationToken: bad })).rejects.toThrow(
        ValidationError,
      );
    // A token of another user's list, or of another search, is not this list's.
    await expect(stores.headers.list('hu-list', { limit: 1, continuationToken: token })).rejects.toThrow(
      ValidationError,
    );
    await expect(
      stores.headers.list('hu-token', {
        limit: 1,
        continuationToken: token,
        match: { q: 'first', sessionIds: [] },
      }),
    ).rejects.toThrow(/continuationToken/);
    const second = await stores.headers.list('hu-token', { limit: 1, continuationToken: token });
    expect(second.headers.map((header) => header.sessionId)).toEqual(['ht-1']);
  });

  it('searches titles by their words, or takes the sessions whose messages matched', async () => {
    const titles = [
      'Trip to Paris in spring',
      'Deploying Functions to Azure',
      'Paris hotels',
      'Cooking rice',
    ];
    for (const [i, title] of titles.entries())
      await stores.headers.touch(touchOf('hu-q', `hq-${i}`, 2 + i, { firstUserText: title }));
    await stores.headers.touch(touchOf('hu-q-other', 'hq-0', 2, { firstUserText: 'Paris trip' }));
    const ids = async (q: string, sessionIds: string[] = []) =>
      (await stores.headers.list('hu-q', { limit: 10, match: { q, sessionIds } })).headers.map(
        (h) => h.sessionId,
      );
    expect(await ids('paris')).toEqual(['hq-2', 'hq-0']);
    expect(await ids('PARIS trips')).toEqual(['hq-0']);
    expect(await ids('deployed function azure')).toEqual(['hq-1']);
    expect(await ids('paris', ['hq-3'])).toEqual(['hq-3', 'hq-2', 'hq-0']);
    expect(await ids('the', ['hq-1'])).toEqual(['hq-1']);
    expect(await ids('the')).toEqual([]);
    expect(await ids('rice paris')).toEqual([]);
    const paged = await stores.headers.list('hu-q', { limit: 1, match: { q: 'paris', sessionIds: [] } });
    expect(paged.headers.map((h) => h.sessionId)).toEqual(['hq-2']);
    const rest = await stores.headers.list('hu-q', {
      limit: 5,
      match: { q: 'paris', sessionIds: [] },
      ...(paged.continuationToken === undefined ? {} : { continuationToken: paged.continuationToken }),
    });
    expect(rest.headers.map((h) => h.sessionId)).toEqual(['hq-0']);
  });

  it("totals the user's conversations, messages and tokens, and deletes a header", async () => {
    await stores.headers.touch(touchOf('hu-t', 'ht-a', 4));
    await stores.headers.touch(touchOf('hu-t', 'ht-b', 6));
    await stores.headers.touch(touchOf('hu-t-other', 'ht-a', 50));
    await stores.headers.recordPersisted('hu-t', 'ht-a', {
      upTo: 4,
      at: at(4),
      tokens: { prompt: 10, completion: 5, total: 15 },
      textTokens: 0,
    });
    await stores.headers.recordPersisted('hu-t', 'ht-b', {
      upTo: 2,
      at: at(4),
      tokens: { prompt: 1, completion: 2, total: 3 },
      textTokens: 0,
    });
    expect(await stores.headers.totals('hu-t')).toEqual({
      conversations: 2,
      messages: 10,
      tokens: { prompt: 11, completion: 7, total: 18 },
    });
    expect(await stores.headers.totals('hu-nobody')).toEqual({
      conversations: 0,
      messages: 0,
      tokens: { prompt: 0, completion: 0, total: 0 },
    });
    expect(await stores.headers.delete('hu-t', 'ht-a')).toBe(true);
    expect(await stores.headers.delete('hu-t', 'ht-a')).toBe(false);
    expect(await stores.headers.get('hu-t', 'ht-a')).toBeUndefined();
    expect(await stores.headers.get('hu-t-other', 'ht-a')).toBeDefined();
    expect((await stores.headers.totals('hu-t')).conversations).toBe(1);
  });
});

describe('Cosmos DB conversation messages', () => {
  it('stores each message once, however often a turn is redelivered', async () => {
    const turn = [message('mu-1', 'ms-1', 0), message('mu-1', 'ms-1', 1)];
    local.resetStats();
    expect(await stores.messages.put(turn)).toBe(2);
    // A turn's messages are one transactional batch: one request.
    expect(local.stats().byOperation).toEqual({ 'item.batch': 1 });
    expect(await stores.messages.put(turn)).toBe(0);
    expect(await stores.messages.put([...turn, message('mu-1', 'ms-1', 2)])).toBe(1);
    expect(await stores.messages.page('mu-1', 'ms-1', { order: 'asc', limit: 10 })).toEqual([
      ...turn,
      message('mu-1', 'ms-1', 2),
    ]);
  });

  it("writes a turn's exchange entry with its messages in one request, and again on a redelivery", async () => {
    const turn = [message('xu-1', 'xs-1', 0), message('xu-1', 'xs-1', 1)];
    const indexed = entry(0, 'Asked about batches', ['cosmos']);
    local.resetStats();
    expect(await stores.messages.put(turn, indexed)).toBe(2);
    expect(local.stats().byOperation).toEqual({ 'item.batch': 1 });
    expect(await stores.sessionMemory.getExchange('xu-1', 'xs-1', 'turn-0')).toEqual(indexed);
    // Redelivered with another line (the model answered anew): the messages stay, the entry is the newer one.
    const again = entry(0, 'Asked about transactional batches', ['cosmos', 'batch']);
    expect(await stores.messages.put(turn, again)).toBe(0);
    expect(await stores.sessionMemory.getExchange('xu-1', 'xs-1', 'turn-0')).toEqual(again);
    // One message alone goes with its entry in the same batch.
    const lone = [message('xu-1', 'xs-2', 0)];
    local.resetStats();
    expect(await stores.messages.put(lone, indexed)).toBe(1);
    expect(local.stats().byOperation).toEqual({ 'item.batch': 1 });
    expect(await stores.sessionMemory.getExchange('xu-1', 'xs-2', 'turn-0')).toEqual(indexed);
    expect(await stores.messages.page('xu-1', 'xs-1', { order: 'asc', limit: 10 })).toEqual(turn);
  });

  it("pages by ordinal either way, skips the conversation's other items, and never mixes users", async () => {
    const all = Array.from({ length: 25 }, (_, i) => message('mu-2', 'ms-2', i));
    await stores.messages.put(all);
    await stores.messages.put(Array.from({ length: 5 }, (_, i) => message('mu-3', 'ms-2', i, 'not yours')));
    await stores.sessionMemory.putExchange('mu-2', 'ms-2', entry(0, 'hello', []));
    await stores.sessionMemory.putDigest('mu-2', 'ms-2', digest('so far'), undefined);
    const ordinals = (messages: StoredMessage[]) => messages.map((m) => m.ordinal);

    expect(ordinals(await stores.messages.page('mu-2', 'ms-2', { order: 'asc', limit: 10 }))).toEqual([
      0, 1, 2, 3, 4, 5, 6, 7, 8, 9,
    ]);
    expect(
      ordinals(await stores.messages.page('mu-2', 'ms-2', { order: 'asc', after: 19, limit: 10 })),
    ).toEqual([20, 21, 22, 23, 24]);
    expect(ordinals(await stores.messages.page('mu-2', 'ms-2', { order: 'desc', limit: 3 }))).toEqual([
      24, 23, 22,
    ]);
    expect(
      ordinals(await stores.messages.page('mu-2', 'ms-2', { order: 'desc', before: 2, limit: 10 })),
    ).toEqual([1, 0]);
    // A branch's path: its gaps are left out, either way, and a page still fills up past them.
    const skip = [
      { from: 2, to: 5 },
      { from: 10, to: 20 },
    ];
    expect(ordinals(await stores.messages.page('mu-2', 'ms-2', { order: 'asc', limit: 6, skip }))).toEqual([
      0, 1, 5, 6, 7, 8,
    ]);
    expect(ordinals(await stores.messages.page('mu-2', 'ms-2', { order: 'desc', limit: 7, skip }))).toEqual([
      24, 23, 22, 21, 20, 9, 8,
    ]);
    const page = await stores.messages.page('mu-2', 'ms-2', { order: 'asc', limit: 100 });
    expect(page).toEqual(all);
    expect(await stores.messages.page('mu-4', 'ms-2', { order: 'asc', limit: 100 })).toEqual([]);
  });

  it("answers a page's alternatives and a branch's newest turn, like the in-memory fake, and never another user's", async () => {
    // a (0,1) → b (2,3) → c (4,5) on the main line, from before branches; b regenerated as d (6,7), edited as
    // e (8,9, from d's group); d continued by f (10,11); c regenerated as g (12,13).
    const branch = (parent: string, branchId: string, alternativeOf?: string) => ({
      parentChatMessageId: parent,
      branchId,
      ...(alternativeOf ? { alternativeOf, origin: 'regenerate' as const } : {}),
      gaps: [],
    });
    const turnOf = (id: string, first: number, b?: ReturnType<typeof branch>) =>
      [first, first + 1].map((ordinal) => ({
        ...message('bu-1', 'bs-1', ordinal),
        id: `${id}_${ordinal === first ? 'user' : 'assistant'}`,
        messageId: `${id}_${ordinal === first ? 'user' : 'assistant'}`,
        chatMessageId: id,
        ...(b ? { branch: b } : {}),
      }));
    const items = [
      ...turnOf('a', 0),
      ...turnOf('b', 2),
      ...turnOf('c', 4),
      ...turnOf('d', 6, branch('a', 'd', 'b')),
      ...turnOf('e', 8, branch('a', 'e', 'b')),
      ...turnOf('f', 10, branch('d', 'd')),
      ...turnOf('g', 12, branch('b', 'g', 'c')),
    ];
    const fake = new MemoryConversationMessages();
    await Promise.all([stores.messages.put(items), fake.put(items)]);
    await stores.messages.put(turnOf('x', 0, branch('a', 'x', 'b')).map((m) => ({ ...m, userId: 'bu-2' })));

    const expected = [
      { chatMessageId: 'd', ordinal: 6, alternativeOf: 'b' },
      { chatMessageId: 'e', ordinal: 8, alternativeOf: 'b' },
      { chatMessageId: 'g', ordinal: 12, alternativeOf: 'c' },
    ];
    for (const store of [stores.messages, fake]) {
      expect(await store.alternatives('bu-1', 'bs-1', ['a', 'b', 'c', 'f'])).toEqual(expected);
      expect(await store.alternatives('bu-1', 'bs-1', ['c'])).toEqual(expected.slice(2));
      expect(await store.alternatives('bu-1', 'bs-1', [])).toEqual([]);
      expect(await store.newestOfBranch('bu-1', 'bs-1', 'd')).toEqual({ chatMessageId: 'f', ordinal: 11 });
      // The main line: the turns from before branches.
      expect(await store.newestOfBranch('bu-1', 'bs-1', 'main')).toEqual({ chatMessageId: 'c', ordinal: 5 });
      expect(await store.newestOfBranch('bu-1', 'bs-1', 'nope')).toBeUndefined();
    }
    expect(await stores.messages.alternatives('bu-3', 'bs-1', ['b'])).toEqual([]);
    expect(await stores.messages.newestOfBranch('bu-3', 'bs-1', 'd')).toBeUndefined();
  });

  it('reads one message of the caller, and nothing else under its id', async () => {
    const stored = message('mu-5', 'ms-5', 0, 'point read');
    await stores.messages.put([stored]);
    await stores.sessionMemory.putExchange('mu-5', 'ms-5', entry(0, 'line', []));
    expect(await stores.messages.get('mu-5', 'ms-5', stored.id)).toEqual(stored);
    expect(await stores.messages.get('mu-6', 'ms-5', stored.id)).toBeUndefined();
    expect(await stores.messages.get('mu-5', 'ms-5', 'exchange.turn-0')).toBeUndefined();
    expect(await stores.messages.get('mu-5', 'ms-5', 'digest')).toBeUndefined();
    expect(await stores.messages.get('mu-5', 'ms-5', 'unknown')).toBeUndefined();
  });

  it("finds the user's sessions whose messages hold every word of a search", async () => {
    await stores.messages.put([
      message('mu-7', 'ms-a', 0, 'How do I deploy the functions?'),
      message('mu-7', 'ms-a', 1, 'Run func azure functionapp publish.'),
      message('mu-7', 'ms-b', 0, 'Best hotels in Paris?'),
      message('mu-7', 'ms-c', 0, 'Deployment of a Paris office'),
      message('mu-8', 'ms-d', 0, 'deploy functions in Paris'),
    ]);
    const sorted = async (q: string, limit = 10) =>
      (await stores.messages.sessionsMatching('mu-7', q, limit)).sort();
    expect(await sorted('deploying functions')).toEqual(['ms-a']);
    expect(await sorted('PARIS')).toEqual(['ms-b', 'ms-c']);
    expect(await sorted('hotel paris')).toEqual(['ms-b']);
    expect(await sorted('the')).toEqual([]);
    expect(await sorted('nothing like this')).toEqual([]);
    expect(await sorted('paris', 1)).toHaveLength(1);
  });

  it("sets, changes and removes an answer's feedback, and touches nothing else of the message", async () => {
    const stored = [message('mu-fb', 'ms-fb', 0, 'question'), message('mu-fb', 'ms-fb', 1, 'answer')];
    await stores.messages.put(stored);
    const up = { rating: 'up' as const, at: at(5) };
    expect(await stores.messages.setFeedback('mu-fb', 'ms-fb', 'turn-0_assistant', up)).toBe('set');
    expect(await stores.messages.get('mu-fb', 'ms-fb', 'turn-0_assistant')).toEqual({
      ...stored[1],
      feedback: up,
    });
    const down = { rating: 'down' as const, at: at(6) };
    expect(await stores.messages.setFeedback('mu-fb', 'ms-fb', 'turn-0_assistant', down)).toBe('set');
    const [, answer] = await stores.messages.page('mu-fb', 'ms-fb', { order: 'asc', limit: 10 });
    expect(answer?.feedback).toEqual(down);
    expect(await stores.messages.setFeedback('mu-fb', 'ms-fb', 'turn-0_assistant', undefined)).toBe('set');
    expect(await stores.messages.get('mu-fb', 'ms-fb', 'turn-0_assistant')).toEqual(stored[1]);
    // Another user's partition, or a message that is not there.
    expect(await stores.messages.setFeedback('mu-fb-2', 'ms-fb', 'turn-0_assistant', up)).toBe('missing');
    expect(await stores.messages.setFeedback('mu-fb', 'ms-fb', 'turn-9_assistant', up)).toBe('missing');
  });

  it('keeps the system prompt beside the messages: written once, never paged, searched or read as a message', async () => {
    const prompt = {
      content: 'You are helpful. The user loves sailing and deploy functions.',
      personalised: true,
      createdAt: at(0),
    };
    await stores.messages.put([message('mu-sp', 'ms-sp', 0, 'hello'), message('mu-sp', 'ms-sp', 1, 'hi')]);
    expect(await stores.messages.getSystemPrompt('mu-sp', 'ms-sp')).toBeUndefined();
    await stores.messages.putSystemPrompt('mu-sp', 'ms-sp', prompt);
    // A redelivery, or another prompt, leaves the first as it was.
    await stores.messages.putSystemPrompt('mu-sp', 'ms-sp', { ...prompt, content: 'other' });
    expect(await stores.messages.getSystemPrompt('mu-sp', 'ms-sp')).toEqual(prompt);
    expect(await stores.messages.getSystemPrompt('mu-sp-2', 'ms-sp')).toBeUndefined();

    const ordinals = (messages: StoredMessage[]) => messages.map((m) => m.ordinal);
    expect(ordinals(await stores.messages.page('mu-sp', 'ms-sp', { order: 'asc', limit: 10 }))).toEqual([
      0, 1,
    ]);
    expect(ordinals(await stores.messages.page('mu-sp', 'ms-sp', { order: 'desc', limit: 10 }))).toEqual([
      1, 0,
    ]);
    expect(await stores.messages.get('mu-sp', 'ms-sp', 'system-prompt')).toBeUndefined();
    expect(await stores.messages.sessionsMatching('mu-sp', 'sailing', 10)).toEqual([]);
    expect(await stores.messages.deleteAll('mu-sp', 'ms-sp')).toBe(3);
    expect(await stores.messages.getSystemPrompt('mu-sp', 'ms-sp')).toBeUndefined();
  });

  it('deletes every item of a large conversation, and only that one', async () => {
    const count = 2_000;
    const messages = Array.from({ length: count }, (_, i) => message('mu-big', 'ms-big', i, `text ${i}`));
    for (let i = 0; i < count; i += 200) await stores.messages.put(messages.slice(i, i + 200));
    for (let ordinal = 0; ordinal < 20; ordinal += 2)
      await stores.sessionMemory.putExchange('mu-big', 'ms-big', entry(ordinal, `line ${ordinal}`, []));
    await stores.sessionMemory.putDigest('mu-big', 'ms-big', digest('big'), undefined);
    await stores.messages.put([message('mu-big', 'ms-other', 0), message('mu-big-2', 'ms-big', 0)]);

    expect(await stores.messages.deleteAll('mu-big', 'ms-big')).toBe(count + 10 + 1);
    expect(await stores.messages.page('mu-big', 'ms-big', { order: 'asc', limit: 10 })).toEqual([]);
    expect(await stores.sessionMemory.getDigest('mu-big', 'ms-big')).toBeUndefined();
    expect(await stores.sessionMemory.findExchanges('mu-big', 'ms-big', 'line', 10)).toEqual([]);
    expect(await stores.messages.page('mu-big', 'ms-other', { order: 'asc', limit: 10 })).toHaveLength(1);
    expect(await stores.messages.page('mu-big-2', 'ms-big', { order: 'asc', limit: 10 })).toHaveLength(1);
    expect(await stores.messages.deleteAll('mu-big', 'ms-big')).toBe(0);
  }, 240_000);
});

describe('Cosmos DB session memory', () => {
  it('keeps one entry per exchange and finds them by tag or words, newest first', async () => {
    await stores.sessionMemory.putExchange(
      'su-1',
      'ss-1',
      entry(0, 'Asked for a Paris itinerary', ['Travel']),
    );
    await stores.sessionMemory.putExchange(
      'su-1',
      'ss-1',
      entry(2, 'Compared hotels in Paris', ['travel', 'hotels']),
    );
    await stores.sessionMemory.putExchange(
      'su-1',
      'ss-1',
      entry(4, 'Fixed a Python import error', ['python']),
    );
    const replaced = entry(4, 'Fixed a Python import error in the CLI', ['python', 'cli']);
    await stores.sessionMemory.putExchange('su-1', 'ss-1', replaced);
    await stores.sessionMemory.putExchange('su-2', 'ss-1', entry(6, 'Paris, theirs', ['travel']));

    expect(await stores.sessionMemory.getExchange('su-1', 'ss-1', 'turn-2')).toEqual(replaced);
    expect(await stores.sessionMemory.getExchange('su-2', 'ss-1', 'turn-2')).toBeUndefined();
    const found = async (topic: string, limit = 10) =>
      (await stores.sessionMemory.findExchanges('su-1', 'ss-1', topic, limit)).map((e) => e.ordinal);
    expect(await found('TRAVEL')).toEqual([2, 0]);
    expect(await found('travel', 1)).toEqual([2]);
    expect(await found('paris hotel')).toEqual([2]);
    expect(await found('cli')).toEqual([4]);
    expect(await found('rust')).toEqual([]);
    expect(await stores.sessionMemory.findExchanges('su-1', 'ss-1', 'paris', 10)).toEqual([
      entry(2, 'Compared hotels in Paris', ['travel', 'hotels']),
      entry(0, 'Asked for a Paris itinerary', ['Travel']),
    ]);
  });

  it('writes the digest only over the version read, and reads it cheaply when unchanged', async () => {
    const sessionMemory = stores.sessionMemory;
    expect(await sessionMemory.getDigest('su-3', 'ss-3')).toBeUndefined();
    expect(await sessionMemory.putDigest('su-3', 'ss-3', digest('one'), undefined)).toBe('written');
    expect(await sessionMemory.putDigest('su-3', 'ss-3', digest('racing'), undefined)).toBe('conflict');
    const first = await sessionMemory.getDigest('su-3', 'ss-3');
    expect(first?.digest).toEqual(digest('one'));

    local.resetStats();
    const again = await sessionMemory.getDigest('su-3', 'ss-3');
    expect(again).toEqual(first);
    expect(local.stats()).toMatchObject({ requests: 1, responseBytes: 0 });

    // Another process writes: this one's next read sees it.
    const elsewhere = createHistoryStores(database, { fullText: 'in-process' }).sessionMemory;
    const theirs = await elsewhere.getDigest('su-3', 'ss-3');
    expect(await elsewhere.putDigest('su-3', 'ss-3', digest('two'), theirs?.version)).toBe('written');
    expect(await sessionMemory.putDigest('su-3', 'ss-3', digest('stale'), first?.version)).toBe('conflict');
    const latest = await sessionMemory.getDigest('su-3', 'ss-3');
    expect(latest?.digest.summary).toBe('two');
    expect(await sessionMemory.putDigest('su-3', 'ss-3', digest('three'), latest?.version)).toBe('written');
    expect((await elsewhere.getDigest('su-3', 'ss-3'))?.digest.summary).toBe('three');
    expect(await sessionMemory.getDigest('su-4', 'ss-3')).toBeUndefined();
  });

  it("gives a digest's revision back, and skips the read only for the revision this process holds", async () => {
    const sessionMemory = stores.sessionMemory;
    expect(await sessionMemory.putDigest('su-5', 'ss-5', { ...digest('one'), revision: 1 }, undefined)).toBe(
      'written',
    );
    const first = await sessionMemory.getDigest('su-5', 'ss-5');
    // The history worker counts revisions from the one it read: without it every digest would be revision 1.
    expect(first?.digest.revision).toBe(1);

    local.resetStats();
    expect(await sessionMemory.getDigest('su-5', 'ss-5', { revision: 1 })).toEqual(first);
    expect(local.stats()).toMatchObject({ requests: 0 });

    // Another process writes revision 2: a round told of it reads it, though this process holds revision 1.
    const elsewhere = createHistoryStores(database, { fullText: 'in-process' }).sessionMemory;
    const theirs = await elsewhere.getDigest('su-5', 'ss-5');
    expect(
      await elsewhere.putDigest('su-5', 'ss-5', { ...digest('two'), revision: 2 }, theirs?.version),
    ).toBe('written');
    const latest = await sessionMemory.getDigest('su-5', 'ss-5', { revision: 2 });
    expect(latest?.digest).toMatchObject({ summary: 'two', revision: 2 });
  });

  it('reads a digest stored before summarizedTokens existed (with its list of unfolded turns) as 0', async () => {
    const { summarizedTokens, ...current } = digest('older');
    expect(summarizedTokens).toBeGreaterThan(0);
    await database.container(CONVERSATION_MESSAGES_CONTAINER).items.create({
      ...current,
      pending: [{ chatMessageId: 'turn-3', fromOrdinal: 6, toOrdinal: 7, tokens: 120 }],
      id: 'digest',
      kind: 'digest',
      userId: 'su-old',
      sessionId: 'ss-old',
    });
    expect((await stores.sessionMemory.getDigest('su-old', 'ss-old'))?.digest).toEqual({
      ...current,
      summarizedTokens: 0,
    });
  });
});

describe("Cosmos DB digest checkpoints and a path's entries", () => {
  const checkpoint = (through: number, summary: string, gaps: { from: number; to: number }[] = []) => ({
    summary,
    summarizedThrough: through,
    lastOrdinal: through - 1,
    gaps,
    createdAt: at(through),
  });

  it('keeps the first checkpoint of a point, and finds the newest one on a path, as the fake does', async () => {
    const fake = new MemorySessionMemory();
    const both = [stores.sessionMemory, fake];
    for (const memory of both) {
      await memory.putCheckpoint('cu-1', 'cs-1', checkpoint(4, 'main to 4'));
      await memory.putCheckpoint('cu-1', 'cs-1', checkpoint(4, 'again'));
      await memory.putCheckpoint('cu-1', 'cs-1', checkpoint(10, 'main to 10'));
      // A branch that left out 6..11 and folded its own turn at 12..13.
      await memory.putCheckpoint('cu-1', 'cs-1', checkpoint(14, 'edit to 14', [{ from: 6, to: 12 }]));
      await memory.putCheckpoint('cu-2', 'cs-1', checkpoint(20, 'theirs'));
    }
    for (const memory of both) {
      const latest = async (before: number, skip: { from: number; to: number }[]) =>
        (await memory.latestCheckpoint('cu-1', 'cs-1', { before, skip }))?.summary;
      expect(await latest(100, [])).toBe('edit to 14');
      expect(await latest(100, [{ from: 12, to: 16 }])).toBe('main to 10');
      expect(await latest(100, [{ from: 6, to: 12 }])).toBe('edit to 14');
      expect(await latest(100, [{ from: 2, to: 16 }])).toBeUndefined();
      expect(await latest(9, [])).toBe('main to 4');
      expect(
        await memory.latestCheckpoint('cu-1', 'cs-1', { before: 100, skip: [{ from: 12, to: 16 }] }),
      ).toEqual(checkpoint(10, 'main to 10'));
      expect(await memory.latestCheckpoint('cu-3', 'cs-1', { before: 100, skip: [] })).toBeUndefined();
    }
  });

  it("gives a path's newest entries below a point, and finds a topic on a path only", async () => {
    const fake = new MemorySessionMemory();
    const both = [stores.sessionMemory, fake];
    for (const memory of both)
      for (const ordinal of [0, 2, 4, 6, 8, 10])
        await memory.putExchange('pu-1', 'ps-1', entry(ordinal, `Paris part ${ordinal}`, ['travel']));
    for (const memory of both) {
      const ordinals = async (before: number, skip: { from: number; to: number }[], limit = 10) =>
        (await memory.pathExchanges('pu-1', 'ps-1', { before, skip, limit })).map((e) => e.ordinal);
      expect(await ordinals(10, [])).toEqual([8, 6, 4, 2, 0]);
      expect(await ordinals(11, [{ from: 2, to: 8 }])).toEqual([10, 8, 0]);
      expect(await ordinals(11, [{ from: 2, to: 8 }], 2)).toEqual([10, 8]);
      expect(await memory.pathExchanges('pu-1', 'ps-1', { before: 3, skip: [], limit: 5 })).toEqual([
        entry(2, 'Paris part 2', ['travel']),
        entry(0, 'Paris part 0', ['travel']),
      ]);
      const found = await memory.findExchanges('pu-1', 'ps-1', 'paris', 10, { skip: [{ from: 4, to: 10 }] });
      expect(found.map((e) => e.ordinal)).toEqual([10, 2, 0]);
      expect(await memory.pathExchanges('pu-2', 'ps-1', { before: 20, skip: [], limit: 5 })).toEqual([]);
    }
  });

  it("deletes the checkpoints with the conversation's other items", async () => {
    await stores.sessionMemory.putCheckpoint('du-1', 'ds-1', checkpoint(4, 'gone soon'));
    await stores.sessionMemory.putDigest('du-1', 'ds-1', digest('gone soon'), undefined);
    expect(await stores.messages.deleteAll('du-1', 'ds-1')).toBe(2);
    expect(
      await stores.sessionMemory.latestCheckpoint('du-1', 'ds-1', { before: 10, skip: [] }),
    ).toBeUndefined();
    // Never paged as a message.
    await stores.sessionMemory.putCheckpoint('du-1', 'ds-1', checkpoint(4, 'not a message'));
    expect(await stores.messages.page('du-1', 'ds-1', { order: 'asc', limit: 10 })).toEqual([]);
  });
});

describe('the adapters and the in-memory fakes', () => {
  it('answer searches alike', async () => {
    const fakeHeaders = new MemoryConversationHeaders();
    const fakeMessages = new MemoryConversationMessages();
    const fakeMemory = new MemorySessionMemory(fakeMessages);
    const titles = [
      'Planning the studies abroad',
      'Stopped containers keep running',
      'Boxes and classes in TypeScript',
      'The database of cities',
      'Café in über-cool Zürich',
    ];
    const texts = [
      'What does the study of cities say?',
      'My container stopped; is it still running?',
      'A class with boxed values',
      'Databases: which one to create?',
      'Zürich cafés',
    ];
    for (const [i, title] of titles.entries()) {
      const touch = touchOf('fu-1', `fs-${i}`, 2 + i, { firstUserText: title });
      await stores.headers.touch(touch);
      await fakeHeaders.touch(touch);
      const items = [message('fu-1', `fs-${i}`, 0, texts[i] ?? '')];
      await stores.messages.put(items);
      await fakeMessages.put(items);
      const line = entry(0, texts[i] ?? '', [title.split(' ')[0] ?? '']);
      await stores.sessionMemory.putExchange('fu-1', `fs-${i}`, line);
      await fakeMemory.putExchange('fu-1', `fs-${i}`, line);
    }
    for (const q of [
      'study',
      'city',
      'stop running',
      'box class',
      'databases created',
      'zurich',
      'Zürich café',
      'the',
      '',
    ]) {
      const sessionIds = (await fakeMessages.sessionsMatching('fu-1', q, 10)).sort();
      expect((await stores.messages.sessionsMatching('fu-1', q, 10)).sort(), q).toEqual(sessionIds);
      const match = { q, sessionIds: [] };
      expect((await stores.headers.list('fu-1', { limit: 10, match })).headers, q).toEqual(
        (await fakeHeaders.list('fu-1', { limit: 10, match })).headers,
      );
      for (let i = 0; i < titles.length; i += 1)
        expect(await stores.sessionMemory.findExchanges('fu-1', `fs-${i}`, q, 5), q).toEqual(
          await fakeMemory.findExchanges('fu-1', `fs-${i}`, q, 5),
        );
    }
  });

  it('set a switched path alike, and keep alike the path of a commit that came after the switch', async () => {
    const fake = new MemoryConversationHeaders();
    const path = (leaf: string, lastOrdinal: number) => ({
      leafChatMessageId: leaf,
      branch: { parentChatMessageId: 'p', branchId: leaf, gaps: [] },
      lastOrdinal,
    });
    const both = async <T>(act: (headers: ConversationHeaders) => Promise<T>) => {
      const [real, twin] = [await act(stores.headers), await act(fake)];
      expect(real).toEqual(twin);
      const [stored, held] = [await stores.headers.get('pu-1', 'ps-1'), await fake.get('pu-1', 'ps-1')];
      expect(stored).toMatchObject(held ?? {});
      return real;
    };
    await both((h) => h.touch(touchOf('pu-1', 'ps-1', 4, { opensConversation: true, path: path('b', 3) })));
    const switched = { path: path('a', 1), preview: 'a', messageCount: 4 };
    expect(await both((h) => h.setPath('pu-1', 'ps-1', switched))).toBe('set');
    await both((h) => h.touch(touchOf('pu-1', 'ps-1', 6, { path: path('c', 5) })));
    expect(await both((h) => h.setPath('pu-1', 'ps-1', switched))).toBe('moved');
    expect((await fake.get('pu-1', 'ps-1'))?.path).toEqual(path('c', 5));
    expect(await both((h) => h.setPath('pu-1', 'ps-2', switched))).toBe('missing');
  });
});
