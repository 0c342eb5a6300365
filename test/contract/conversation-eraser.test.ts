// Contract tests of what deleting a conversation removes outside history's containers, and of the session store's
// delete marks and claim release, against the local Cosmos DB with the real @azure/cosmos client; other sessions'
// and users' items are left alone.
import { randomUUID } from 'node:crypto';
import type { Container, CosmosClient, Database } from '@azure/cosmos';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createLocalCosmosClient,
  provisionCosmos,
  startLocalCosmos,
  type LocalCosmos,
} from '../../local/cosmos/local-cosmos.js';
import { createCosmosPostedMessageStore } from '../../shared/chat/adapters/cosmos-posted-message-store.js';
import { createCosmosSessionStore } from '../../shared/chat/adapters/cosmos-session-store.js';
import {
  HOT_CONVERSATIONS_CONTAINER,
  SESSION_TOMBSTONE_TTL_SECONDS,
  SESSIONS_CONTAINER,
} from '../../shared/chat/contracts/documents.js';
import { createCosmosHotStore } from '../../shared/conversation/adapters/cosmos-hot-store.js';
import { COSMOS_DATABASE, cosmosContainers } from '../../shared/app/cosmos-containers.js';
import { createCosmosConversationEraser } from '../../shared/history/adapters/cosmos-conversation-eraser.js';
import type { ConversationEraser } from '../../shared/history/conversation-eraser.js';
import { TURN_EVENTS_CONTAINER } from '../../shared/streaming/contracts.js';
import { createHotWorkingMemory } from '../../shared/chat/hot-working-memory.js';
import { assistantMessageId, userMessageId } from '../../shared/conversation/turn-ids.js';
import type { WorkingMemory } from '../../shared/conversation/working-memory-store.js';
import { MemoryConversationHeaders, MemoryConversationMessages } from '../support/in-memory-history.js';

let local: LocalCosmos;
let client: CosmosClient;
let database: Database;
let eraser: ConversationEraser;

beforeAll(async () => {
  local = await startLocalCosmos({ flushDelayMs: 10 });
  client = createLocalCosmosClient(local);
  await provisionCosmos(client, COSMOS_DATABASE, cosmosContainers);
  database = client.database(COSMOS_DATABASE);
  eraser = createCosmosConversationEraser({
    hot: createCosmosHotStore(database.container(HOT_CONVERSATIONS_CONTAINER)),
    turnEvents: database.container(TURN_EVENTS_CONTAINER),
    sessions: database.container(SESSIONS_CONTAINER),
  });
});
afterAll(async () => {
  client?.dispose();
  await local?.stop();
});

const digest = (n: number) => n.toString(16).padStart(64, '0');

async function ids(container: Container, partitionKey: string): Promise<string[]> {
  const { resources } = await container.items
    .query<{ id: string }>('SELECT c.id FROM c', { partitionKey })
    .fetchAll();
  return resources.map((item) => item.id).sort();
}

/** What a session with `turns` turns leaves in the hot store, turn-events and sessions. */
async function seedSession(userId: string, turns: number): Promise<{ sessionId: string; posted: string[] }> {
  const sessions = createCosmosSessionStore(database.container(SESSIONS_CONTAINER));
  const posted = createCosmosPostedMessageStore(database.container(SESSIONS_CONTAINER));
  const { sessionId } = await sessions.create(userId);
  const hot = database.container(HOT_CONVERSATIONS_CONTAINER);
  const events = database.container(TURN_EVENTS_CONTAINER);
  await hot.items.create({ id: sessionId, sessionId, userId, messages: [] });
  const chatMessageIds: string[] = [];
  for (let turn = 0; turn < turns; turn += 1) {
    const chatMessageId = randomUUID();
    chatMessageIds.push(chatMessageId);
    // Its stream ticket is kept with its posted record.
    await posted.claim(
      {
        userId,
        sessionId,
        chatMessageId,
        textSha256: digest(turn),
        postedAt: new Date(Date.UTC(2026, 10, 22, 10, turn)).toISOString(),
      },
      { sha256: digest(1000 + turn), expiresAt: new Date(Date.now() + 60_000).toISOString() },
    );
    await hot.items.create({ id: `turn.${chatMessageId}`, sessionId, rounds: [] });
    await hot.items.create({ id: `tool.${chatMessageId}.0.0`, sessionId, result: '5' });
    for (let seq = 1; seq <= 3; seq += 1)
      await events.items.create({ id: `${chatMessageId}.${seq}`, sessionId, chatMessageId, seq });
  }
  return { sessionId, posted: chatMessageIds };
}

describe('Cosmos DB conversation eraser', () => {
  it("names the posted messages, then removes the session's turn data and posted records, and nothing else", async () => {
    const mine = await seedSession('user_001', 3);
    const sibling = await seedSession('user_001', 1);
    const others = await seedSession('user_002', 1);
    const hot = database.container(HOT_CONVERSATIONS_CONTAINER);
    const events = database.container(TURN_EVENTS_CONTAINER);
    const sessions = database.container(SESSIONS_CONTAINER);

    expect(await eraser.postedMessageIds('user_001', mine.sessionId)).toEqual(mine.posted);
    // Posted records are read through their owner's partition only.
    expect(await eraser.postedMessageIds('user_002', mine.sessionId)).toEqual([]);
    // Before: working memory + a turn record and a tool result per turn; 3 events per turn.
    expect(await ids(hot, mine.sessionId)).toHaveLength(1 + 3 * 2);
    expect(await ids(events, mine.sessionId)).toHaveLength(3 * 3);

    expect(await eraser.eraseTurnData(mine.sessionId)).toBe(7 + 9);
    expect(await eraser.erasePosted('user_001', mine.sessionId)).toBe(3);

    expect(await ids(hot, mine.sessionId)).toEqual([]);
    expect(await ids(events, mine.sessionId)).toEqual([]);
    // The session document itself is the session store's to remove.
    expect(await ids(sessions, 'user_001')).toEqual(
      [
        mine.sessionId,
        sibling.sessionId,
        ...sibling.posted.map((id) => `posted.${sibling.sessionId}.${id}`),
      ].sort(),
    );
    expect(await ids(hot, sibling.sessionId)).toHaveLength(3);
    expect(await ids(events, sibling.sessionId)).toHaveLength(3);
    expect(await ids(hot, others.sessionId)).toHaveLength(3);
    expect(await ids(sessions, 'user_002')).toHaveLength(2);

    // A retried delete finds nothing left and succeeds.
    expect(await eraser.eraseTurnData(mine.sessionId)).toBe(0);
    expect(await eraser.erasePosted('user_001', mine.sessionId)).toBe(0);
    expect(await eraser.postedMessageIds('user_001', mine.sessionId)).toEqual([]);
  });
});

describe('Cosmos DB conversation eraser: working memory bases', () => {
  it("leaves none of a deleted conversation's bases, and each names its user for an account's erase", async () => {
    const hot = database.container(HOT_CONVERSATIONS_CONTAINER);
    const workingMemory = createHotWorkingMemory({
      hot: createCosmosHotStore(hot),
      history: { headers: new MemoryConversationHeaders(), messages: new MemoryConversationMessages() },
      windowBytes: 4_000,
      tailBytes: 800,
    });
    const sessionId = randomUUID();
    let memory: WorkingMemory | undefined;
    for (let turn = 0; turn < 12; turn += 1) {
      const chatMessageId = randomUUID();
      const at = new Date(Date.UTC(2026, 10, 22, 10, turn)).toISOString();
      memory = await workingMemory.append(
        'user_003',
        sessionId,
        [
          {
            messageId: userMessageId(chatMessageId),
            chatMessageId,
            role: 'user',
            content: `q${turn}`,
            timestamp: at,
          },
          {
            messageId: assistantMessageId(chatMessageId),
            chatMessageId,
            role: 'assistant',
            content: `a${turn}`,
            timestamp: at,
            finishReason: 'stop',
          },
        ],
        memory,
      );
    }
    const bases = (await ids(hot, sessionId)).filter((id) => id.startsWith('wm-base.'));
    expect(bases.length).toBeGreaterThan(1);
    const { resources: named } = await hot.items
      .query<string>({
        query: 'SELECT VALUE c.id FROM c WHERE c.userId = @u',
        parameters: [{ name: '@u', value: 'user_003' }],
      })
      .fetchAll();
    expect(named).toEqual(expect.arrayContaining([sessionId, ...bases]));

    expect(await eraser.eraseTurnData(sessionId)).toBe(1 + bases.length);
    expect(await ids(hot, sessionId)).toEqual([]);
  });
});

describe('Cosmos DB session store: deleting a session', () => {
  it('hides a session marked as being deleted, then keeps it as a tombstone; another user cannot mark it', async () => {
    const container = database.container(SESSIONS_CONTAINER);
    const sessions = createCosmosSessionStore(container);
    const { sessionId } = await sessions.create('user_001');

    expect(await sessions.markDeleting('user_002', sessionId)).toBe(false);
    expect(await sessions.markDeleted('user_002', sessionId)).toBe(false);
    expect(await sessions.isDeleted('user_002', sessionId)).toBe(false);
    expect(await sessions.find('user_001', sessionId)).toMatchObject({ sessionId });
    expect(await sessions.isDeleted('user_001', sessionId)).toBe(false);

    expect(await sessions.markDeleting('user_001', sessionId)).toBe(true);
    expect(await sessions.find('user_001', sessionId)).toBeUndefined();
    expect(await sessions.isDeleted('user_001', sessionId)).toBe(true);
    // Marking again (a retried delete) is harmless.
    expect(await sessions.markDeleting('user_001', sessionId)).toBe(true);

    // The finished delete leaves a tombstone with its own expiry; it is not marked again (a second DELETE is 404).
    expect(await sessions.markDeleted('user_001', sessionId)).toBe(true);
    expect(await sessions.isDeleted('user_001', sessionId)).toBe(true);
    expect(await sessions.find('user_001', sessionId)).toBeUndefined();
    expect(await sessions.markDeleting('user_001', sessionId)).toBe(false);
    const { resource } = await container.item(sessionId, 'user_001').read();
    expect(resource).toMatchObject({ deletedAt: expect.any(String), ttl: SESSION_TOMBSTONE_TTL_SECONDS });
    expect(await sessions.markDeleting('user_001', randomUUID())).toBe(false);
    expect(await sessions.isDeleted('user_001', randomUUID())).toBe(false);
  });
});

describe('Cosmos DB session store: releasing a claimed session', () => {
  it('removes the session a claim made but keeps the id its claimant’s, whose next claim makes it again', async () => {
    const sessions = createCosmosSessionStore(database.container(SESSIONS_CONTAINER));
    const chatId = 'rE1eAsEd0000000a';
    expect(await sessions.claim('user_001', chatId)).toMatchObject({ sessionId: chatId, userId: 'user_001' });

    await sessions.release('user_001', chatId);
    expect(await sessions.find('user_001', chatId)).toBeUndefined();
    expect(await sessions.claimant(chatId)).toBe('user_001');
    expect(await sessions.claim('user_002', chatId)).toBeUndefined();
    // Releasing again, or a session that never was, is harmless.
    await sessions.release('user_001', chatId);
    await sessions.release('user_002', randomUUID());

    expect(await sessions.claim('user_001', chatId)).toMatchObject({ sessionId: chatId, userId: 'user_001' });
    expect(await sessions.find('user_001', chatId)).toMatchObject({ sessionId: chatId });
  });
});
