// The hot store contract over Redis (a real redis-server spawned on a free loopback port), and what only the Redis
// adapter promises: HSCAN paging, the session's byte bound, versions that never come back, and an outage that fails
// at once with a DependencyError naming no key, then heals by itself once Redis is back.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createRedisHotStore,
  type RedisHotStore,
} from '../../shared/conversation/adapters/redis-hot-store.js';
import type { HotStore, HotValue } from '../../shared/conversation/hot-store.js';
import { DependencyError, ValidationError } from '../../shared/errors.js';
import { startRedisServer, type TestRedisServer } from '../support/redis-server.js';
import { createHotWorkingMemory } from '../../shared/chat/hot-working-memory.js';
import type { ConversationMessage } from '../../shared/conversation/messages.js';
import { userMessageId } from '../../shared/conversation/turn-ids.js';
import { MemoryConversationHeaders, MemoryConversationMessages } from '../support/in-memory-history.js';
import { describeHotStoreContract } from './hot-store-contract.js';

const open = (redis: TestRedisServer, ttlSeconds: number) =>
  createRedisHotStore({
    connection: { kind: 'url', url: redis.url },
    ttlSeconds,
    maxValueBytes: 64 * 1024,
    maxSessionBytes: 256 * 1024,
    connectTimeoutMs: 2_000,
    reconnectMaxDelayMs: 200,
  });

describeHotStoreContract('Redis', async ({ ttlSeconds }) => {
  const redis = await startRedisServer();
  const store = createRedisHotStore({ connection: { kind: 'url', url: redis.url }, ttlSeconds });
  const other = createRedisHotStore({ connection: { kind: 'url', url: redis.url }, ttlSeconds });
  return {
    store,
    other,
    // Time passes for expiry by shortening every hash's remaining life (deleting it when none is left).
    advance: async (seconds) => {
      const keys = (await redis.command('KEYS', 'hot:*')).match(/hot:\{[^}\r\n]*\}/g) ?? [];
      for (const key of keys) {
        const left = Number(/^:(-?\d+)/.exec(await redis.command('PTTL', key))?.[1] ?? -2);
        if (left < 0) continue;
        const rest = left - seconds * 1000;
        await (rest > 0 ? redis.command('PEXPIRE', key, String(rest)) : redis.command('DEL', key));
      }
    },
    close: async () => {
      await store.close();
      await other.close();
      await redis.stop();
    },
  };
});

let redis: TestRedisServer;
let store: RedisHotStore;
let n = 0;
const session = () => `s-${process.pid}-${++n}`;

beforeAll(async () => {
  redis = await startRedisServer();
  store = open(redis, 2);
}, 30_000);

afterAll(async () => {
  await store?.close();
  await redis?.stop();
}, 30_000);

describe('Redis hot store, beyond the contract', () => {
  it('never gives back a version after the session was deleted and written anew', async () => {
    const id = session();
    const first = await store.write(id, 'k', { n: 1 }, { kind: 'absent' });
    if (first.kind !== 'written') throw new Error('first write conflicted');
    await store.deleteSession(id);
    await store.write(id, 'k', { n: 2 }, { kind: 'absent' });
    expect(await store.write(id, 'k', { n: 3 }, { kind: 'version', version: first.version })).toEqual({
      kind: 'conflict',
    });
  });

  it('reads an unchanged entry without its value sent again, and sees another client’s write', async () => {
    const id = session();
    const big = { text: 'z'.repeat(40 * 1024) };
    await store.write(id, 'k', big, { kind: 'absent' });
    const outputBytes = async () =>
      Number(/total_net_output_bytes:(\d+)/.exec(await redis.command('INFO', 'stats'))?.[1] ?? NaN);
    const before = await outputBytes();
    expect((await store.read(id, 'k'))?.value).toEqual(big);
    // The INFO reply in between is a few KB; the value alone would be 40 KB.
    expect((await outputBytes()) - before).toBeLessThan(8 * 1024);

    const other = open(redis, 2);
    try {
      const changed = await other.write(id, 'k', { text: 'changed' }, { kind: 'any' });
      if (changed.kind !== 'written') throw new Error('not written');
      expect(await store.read(id, 'k')).toEqual({
        key: 'k',
        value: { text: 'changed' },
        version: changed.version,
      });
      await other.deleteSession(id);
      expect(await store.read(id, 'k')).toBeUndefined();
    } finally {
      await other.close();
    }
  });

  it('sends a slid window as its new items only, and stores exactly the value written', async () => {
    const id = session();
    const item = (i: number) => ({ id: `m${i}`, text: `message ${i} é😀 `.repeat(30), n: 1.5 + i });
    const inputBytes = async () =>
      Number(/total_net_input_bytes:(\d+)/.exec(await redis.command('INFO', 'stats'))?.[1] ?? NaN);
    let value: HotValue = { items: Array.from({ length: 30 }, (_, i) => item(i)), count: 30, gone: 'x' };
    let version = await writtenVersion(store.write(id, 'window', value, { kind: 'absent' }));
    for (let turn = 0; turn < 3; turn++) {
      const next: HotValue = {
        items: [...(value.items as unknown[]).slice(2), item(30 + 2 * turn), item(31 + 2 * turn)],
        count: 32 + 2 * turn,
        empty: [],
      };
      const before = await inputBytes();
      version = await writtenVersion(
        store.write(id, 'window', next, { kind: 'version', version, previous: value }),
      );
      const sent = (await inputBytes()) - before;
      // The whole value is ten times the new items. The INFO command in between is a few bytes, and the first
      // splice sends its script's source once.
      const added = Buffer.byteLength(JSON.stringify([item(0), item(1)]));
      const whole = Buffer.byteLength(JSON.stringify(next));
      expect(whole).toBeGreaterThan(added * 10);
      expect(sent).toBeLessThan(turn === 0 ? whole / 4 : added * 2);
      const other = open(redis, 2);
      try {
        expect(await other.read(id, 'window')).toStrictEqual({ key: 'window', value: next, version });
      } finally {
        await other.close();
      }
      value = next;
    }
  });

  it('writes the whole value when the stored one is not the JSON this client holds', async () => {
    const id = session();
    const value = { items: Array.from({ length: 20 }, (_, i) => `item ${i} `.repeat(20)) };
    const version = await writtenVersion(store.write(id, 'k', value, { kind: 'absent' }));
    // The same version over other JSON (no writer does this; the adapter must not splice it blindly).
    await redis.command('HSET', `hot:{${id}}`, 'k', `${version}:${JSON.stringify({ items: ['x'] })}`);
    const next = { items: [...value.items.slice(1), 'new'] };
    const written = await writtenVersion(
      store.write(id, 'k', next, { kind: 'version', version, previous: value }),
    );
    const other = open(redis, 2);
    try {
      expect(await other.read(id, 'k')).toStrictEqual({ key: 'k', value: next, version: written });
    } finally {
      await other.close();
    }
  });

  it('holds only the most recent entries of a session, and reads and writes the others in full', async () => {
    const small = createRedisHotStore({
      connection: { kind: 'url', url: redis.url },
      ttlSeconds: 2,
      readCache: { entriesPerSession: 2 },
    });
    try {
      const id = session();
      const value = (key: string) => ({ key, text: key.repeat(20 * 1024) });
      const versions = new Map<string, string>();
      for (const key of ['a', 'b', 'c', 'd'])
        versions.set(key, await writtenVersion(small.write(id, key, value(key), { kind: 'absent' })));
      const outputBytes = async () =>
        Number(/total_net_output_bytes:(\d+)/.exec(await redis.command('INFO', 'stats'))?.[1] ?? NaN);
      const readCost = async (key: string) => {
        const before = await outputBytes();
        expect((await small.read(id, key))?.value).toEqual(value(key));
        return (await outputBytes()) - before;
      };
      // c and d are held (a version check); a and b were let go and come back whole (20 KB each).
      expect(await readCost('d')).toBeLessThan(8 * 1024);
      expect(await readCost('a')).toBeGreaterThan(20 * 1024);
      // A conditional write over an entry no longer held is checked by Redis as any other.
      expect(
        await small.write(id, 'b', { n: 1 }, { kind: 'version', version: versions.get('b') ?? '' }),
      ).toMatchObject({ kind: 'written' });
      expect(await small.write(id, 'c', { n: 1 }, { kind: 'version', version: 'stale' })).toEqual({
        kind: 'conflict',
      });
    } finally {
      await small.close();
    }
  });

  it('lists a session with many entries across HSCAN pages', async () => {
    const id = session();
    const keys = Array.from({ length: 300 }, (_, i) => `turn:${String(i).padStart(4, '0')}`);
    await Promise.all(keys.map((key) => store.write(id, key, { key }, { kind: 'any' })));
    const listed = await store.list(id, 'turn:');
    expect(listed.map((entry) => entry.key)).toEqual(keys);
  });

  it('refuses an oversized value before sending it, and a session past its bound', async () => {
    const id = session();
    const big = { text: 'x'.repeat(64 * 1024) };
    await expect(store.write(id, 'big', big, { kind: 'any' })).rejects.toBeInstanceOf(ValidationError);
    expect(await store.read(id, 'big')).toBeUndefined();
    const part = { text: 'y'.repeat(60 * 1024) };
    for (const key of ['a', 'b', 'c', 'd']) await store.write(id, key, part, { kind: 'any' });
    await expect(store.write(id, 'e', part, { kind: 'any' })).rejects.toBeInstanceOf(ValidationError);
    expect(await store.read(id, 'e')).toBeUndefined();
    // Rewriting an entry counts only its growth, so a full session can still update what it holds.
    expect((await store.write(id, 'a', { text: 'small' }, { kind: 'any' })).kind).toBe('written');
    expect((await store.write(id, 'e', part, { kind: 'any' })).kind).toBe('written');
  });

  it("carries the digest's revision marked by another process into working memory, in one entry", async () => {
    const history = { headers: new MemoryConversationHeaders(), messages: new MemoryConversationMessages() };
    const [here, there] = [open(redis, 60), open(redis, 60)];
    try {
      // As the app opens it on Redis: no tail bound, so no base beside the entry.
      const memoryOf = (hot: HotStore) =>
        createHotWorkingMemory({ hot, history, windowBytes: 64 * 1024, tailBytes: Number.POSITIVE_INFINITY });
      const [round, worker] = [memoryOf(here), memoryOf(there)];
      const id = session();
      const appended = await round.append('u-1', id, [userMessage(id, 'x'.repeat(20 * 1024))]);
      expect(appended).toMatchObject({ digestRevision: 0 });
      // The history worker, in another process, marks the revision it is about to write.
      await worker.announceDigest('u-1', id, 1);
      const loaded = await round.load('u-1', id);
      expect(loaded).toMatchObject({ digestRevision: 1, messages: appended.messages });
      expect(loaded.layout).toBeUndefined();
      expect((await here.list(id, '')).map((entry) => entry.key)).toEqual([id]);
    } finally {
      await here.close();
      await there.close();
    }
  });

  it('fails at once with a DependencyError naming no key while Redis is down, and works again after', async () => {
    const id = session();
    await store.write(id, 'secret-key', { secret: 'value' }, { kind: 'any' });
    await redis.stop();
    try {
      const failure = await store.read(id, 'secret-key').catch((error: unknown) => error);
      expect(failure).toBeInstanceOf(DependencyError);
      const message = (failure as Error).message;
      expect(message).not.toContain('secret');
      expect(message).not.toContain(id);
      const write = await store
        .write(id, 'secret-key', { secret: 'value' }, { kind: 'any' })
        .catch((error: unknown) => error);
      expect(write).toBeInstanceOf(DependencyError);
      await expect(store.ping()).rejects.toBeInstanceOf(DependencyError);
    } finally {
      await redis.start();
    }
    // The client reconnects by itself; the restarted server lost the data and its script cache.
    await expect.poll(() => store.ping().catch(() => 'down'), { timeout: 15_000 }).toContain('PONG');
    expect(await store.read(id, 'secret-key')).toBeUndefined();
    expect((await store.write(id, 'k', { n: 1 }, { kind: 'absent' })).kind).toBe('written');
  }, 40_000);
});

async function writtenVersion(result: ReturnType<HotStore['write']>): Promise<string> {
  const settled = await result;
  if (settled.kind !== 'written') throw new Error(`expected a write, got ${settled.kind}`);
  return settled.version;
}

function userMessage(chatMessageId: string, content: string): ConversationMessage {
  return {
    messageId: userMessageId(chatMessageId),
    chatMessageId,
    role: 'user',
    content,
    timestamp: '2026-11-26T10:00:00.000Z',
  };
}
