// The Redis hot store against a real redis-server: conditional writes, prefix listing, expiry, the bounds, and
// what it does while Redis is down (fails at once with a DependencyError naming no key) and once it is back.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createRedisHotStore,
  hashKey,
  type RedisHotStore,
} from '../../shared/conversation/adapters/redis-hot-store.js';
import { DependencyError, ValidationError } from '../../shared/errors.js';
import { startRedisServer, type TestRedisServer } from '../support/redis-server.js';

let redis: TestRedisServer;
let store: RedisHotStore;
let n = 0;
const session = () => `s-${process.pid}-${++n}`;

beforeAll(async () => {
  redis = await startRedisServer();
  store = createRedisHotStore({
    connection: { kind: 'url', url: redis.url },
    ttlSeconds: 2,
    maxValueBytes: 64 * 1024,
    maxSessionBytes: 256 * 1024,
    connectTimeoutMs: 2_000,
    reconnectMaxDelayMs: 200,
  });
}, 30_000);

afterAll(async () => {
  await store?.close();
  await redis?.stop();
}, 30_000);

describe('Redis hot store', () => {
  it('reads nothing for a missing key, then writes on absent once and conflicts after', async () => {
    const id = session();
    expect(await store.read(id, 'memory')).toBeUndefined();
    const first = await store.write(id, 'memory', { n: 1 }, { kind: 'absent' });
    expect(first.kind).toBe('written');
    expect(await store.write(id, 'memory', { n: 2 }, { kind: 'absent' })).toEqual({ kind: 'conflict' });
    const read = await store.read(id, 'memory');
    expect(read?.value).toEqual({ n: 1 });
    expect(first.kind === 'written' && read?.version).toBe(first.kind === 'written' && first.version);
  });

  it('writes on a version only while it is current', async () => {
    const id = session();
    const first = await store.write(id, 'k', { n: 1 }, { kind: 'absent' });
    if (first.kind !== 'written') throw new Error('first write conflicted');
    const second = await store.write(id, 'k', { n: 2 }, { kind: 'version', version: first.version });
    expect(second.kind).toBe('written');
    expect(await store.write(id, 'k', { n: 3 }, { kind: 'version', version: first.version })).toEqual({
      kind: 'conflict',
    });
    expect(await store.write(id, 'other', { n: 1 }, { kind: 'version', version: first.version })).toEqual({
      kind: 'conflict',
    });
    expect((await store.read(id, 'k'))?.value).toEqual({ n: 2 });
    expect((await store.write(id, 'k', { n: 4 }, { kind: 'any' })).kind).toBe('written');
    expect((await store.read(id, 'k'))?.value).toEqual({ n: 4 });
  });

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

  it('lists by prefix in key order, with glob characters taken literally and only this session', async () => {
    const id = session();
    for (const key of ['turn:b', 'turn:a', 'turn*x', 'memory', 'xturn:c', 'turn:c'])
      await store.write(id, key, { key }, { kind: 'any' });
    await store.write(session(), 'turn:z', { key: 'turn:z' }, { kind: 'any' });
    expect((await store.list(id, 'turn:')).map((entry) => entry.key)).toEqual(['turn:a', 'turn:b', 'turn:c']);
    expect((await store.list(id, 'turn*')).map((entry) => entry.key)).toEqual(['turn*x']);
    expect((await store.list(id, '')).map((entry) => entry.key)).toEqual([
      'memory',
      'turn*x',
      'turn:a',
      'turn:b',
      'turn:c',
      'xturn:c',
    ]);
  });

  it('lists a session with many entries across HSCAN pages', async () => {
    const id = session();
    const keys = Array.from({ length: 300 }, (_, i) => `turn:${String(i).padStart(4, '0')}`);
    await Promise.all(keys.map((key) => store.write(id, key, { key }, { kind: 'any' })));
    const listed = await store.list(id, 'turn:');
    expect(listed.map((entry) => entry.key)).toEqual(keys);
  });

  it('round-trips values exactly', async () => {
    const id = session();
    const value = {
      text: 'héllo 👋 ：\u0000',
      nested: { list: [], deep: [{ a: null, b: 1.5, c: true }] },
      e: {},
    };
    await store.write(id, 'v', value, { kind: 'any' });
    expect((await store.read(id, 'v'))?.value).toEqual(value);
  });

  it('lets exactly one of concurrent conditional writes win', async () => {
    const id = session();
    const base = await store.write(id, 'k', { n: 0 }, { kind: 'absent' });
    if (base.kind !== 'written') throw new Error('first write conflicted');
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        store.write(id, 'k', { n: i + 1 }, { kind: 'version', version: base.version }),
      ),
    );
    expect(results.filter((result) => result.kind === 'written')).toHaveLength(1);
    const absent = await Promise.all(
      Array.from({ length: 20 }, (_, i) => store.write(id, 'fresh', { n: i }, { kind: 'absent' })),
    );
    expect(absent.filter((result) => result.kind === 'written')).toHaveLength(1);
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

  it('deletes all and only the session’s entries', async () => {
    const id = session();
    const other = session();
    await store.write(id, 'a', { n: 1 }, { kind: 'any' });
    await store.write(other, 'a', { n: 2 }, { kind: 'any' });
    await store.deleteSession(id);
    await store.deleteSession(session());
    expect(await store.list(id, '')).toEqual([]);
    expect((await store.read(other, 'a'))?.value).toEqual({ n: 2 });
  });

  it('expires a session’s hash a TTL after its last write', async () => {
    const id = session();
    await store.write(id, 'a', { n: 1 }, { kind: 'any' });
    const ttl = await redis.command('TTL', hashKey(id));
    expect(Number(ttl.slice(1))).toBeGreaterThan(0);
    await new Promise((resolve) => setTimeout(resolve, 3_200));
    expect(await store.read(id, 'a')).toBeUndefined();
  }, 20_000);

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
