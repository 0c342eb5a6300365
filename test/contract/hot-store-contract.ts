// The hot store port's contract: the cases every adapter passes unchanged (conditions, key order, session scope,
// the value bound, exact round trips, racing writers, expiry). Each adapter's test file calls it with an opener.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HOT_VALUE_MAX_BYTES, type HotStore, type HotValue } from '../../shared/conversation/hot-store.js';
import { ValidationError } from '../../shared/errors.js';

export interface OpenedHotStore {
  store: HotStore;
  /** A second client of the same entries, as another process holds it (no cache shared with `store`). */
  other?: HotStore;
  /** Lets `seconds` pass for the store's expiry (a moved clock, or remaining lifetimes shortened). */
  advance(seconds: number): Promise<void>;
  close(): Promise<void>;
}

/** The TTL the suite opens a store with: long enough that no case expires by the machine being slow. */
export const CONTRACT_TTL_SECONDS = 10;

export function describeHotStoreContract(
  name: string,
  open: (options: { ttlSeconds: number }) => Promise<OpenedHotStore>,
): void {
  describe(`hot store contract: ${name}`, () => {
    let opened: OpenedHotStore;
    let store: HotStore;
    beforeAll(async () => {
      opened = await open({ ttlSeconds: CONTRACT_TTL_SECONDS });
      store = opened.store;
    }, 60_000);
    afterAll(async () => {
      await opened?.close();
    });

    const session = () => randomUUID();

    it('reads nothing under a key never written', async () => {
      expect(await store.read(session(), 'never')).toBeUndefined();
      expect(await store.list(session(), '')).toEqual([]);
    });

    it('writes an absent key once, then meets a conflict', async () => {
      const s = session();
      const first = await store.write(s, 'k', { n: 1 }, { kind: 'absent' });
      expect(first.kind).toBe('written');
      expect(await store.write(s, 'k', { n: 2 }, { kind: 'absent' })).toEqual({ kind: 'conflict' });
      const read = await store.read(s, 'k');
      expect(read).toEqual({ key: 'k', value: { n: 1 }, version: first.kind === 'written' && first.version });
    });

    it('writes over the version read, and refuses a stale or missing one', async () => {
      const s = session();
      const created = await store.write(s, 'k', { n: 1 }, { kind: 'absent' });
      if (created.kind !== 'written') throw new Error('not written');
      const next = await store.write(s, 'k', { n: 2 }, { kind: 'version', version: created.version });
      if (next.kind !== 'written') throw new Error('not written');
      expect(next.version).not.toBe(created.version);
      expect(await store.write(s, 'k', { n: 3 }, { kind: 'version', version: created.version })).toEqual({
        kind: 'conflict',
      });
      expect(await store.write(s, 'other', { n: 1 }, { kind: 'version', version: next.version })).toEqual({
        kind: 'conflict',
      });
      expect(await store.read(s, 'k')).toEqual({ key: 'k', value: { n: 2 }, version: next.version });
      expect(await store.read(s, 'other')).toBeUndefined();
    });

    it('writes whatever the key holds under `any`', async () => {
      const s = session();
      const first = await store.write(s, 'k', { n: 1 }, { kind: 'any' });
      const second = await store.write(s, 'k', { n: 2 }, { kind: 'any' });
      expect(first.kind).toBe('written');
      if (second.kind !== 'written') throw new Error('not written');
      expect(await store.read(s, 'k')).toEqual({ key: 'k', value: { n: 2 }, version: second.version });
    });

    it('applies a version write given the previous value exactly, whether the change is small or large', async () => {
      const s = session();
      const message = (i: number) => ({ id: `m${i}`, text: `message ${i} é😀`, tags: [] as string[] });
      const before: HotValue = {
        messages: [0, 1, 2, 3, 4].map(message),
        count: 5,
        dropped: 'gone next',
        nested: { a: { b: [1, 2] } },
      };
      let version = await written(store.write(s, 'wm', before, { kind: 'absent' }));
      // A list that lost its head and gained a tail, a field set, one removed, one added.
      const small: HotValue = {
        messages: [2, 3, 4, 5, 6].map(message),
        count: 7,
        nested: { a: { b: [1, 2] } },
        added: { x: null },
      };
      version = await written(store.write(s, 'wm', small, { kind: 'version', version, previous: before }));
      expect((await store.read(s, 'wm'))?.value).toStrictEqual(small);
      expect((await (opened.other ?? store).read(s, 'wm'))?.value).toStrictEqual(small);
      // Too many changes for a short difference: the whole value.
      const large: HotValue = { messages: Array.from({ length: 30 }, (_, i) => message(100 + i)), count: 30 };
      version = await written(store.write(s, 'wm', large, { kind: 'version', version, previous: small }));
      expect(await store.read(s, 'wm')).toStrictEqual({ key: 'wm', value: large, version });
      expect(await (opened.other ?? store).read(s, 'wm')).toStrictEqual({ key: 'wm', value: large, version });
      // The previous value does not make a stale version good.
      expect(
        await store.write(s, 'wm', small, { kind: 'version', version: 'stale', previous: large }),
      ).toEqual({ kind: 'conflict' });
      expect((await store.read(s, 'wm'))?.value).toStrictEqual(large);
    });

    it('applies a version write as the value written, whatever names the values hold', async () => {
      const s = session();
      // Names every object inherits, and fields whose value JSON leaves out.
      const before: HotValue = { constructor: 1, toString: 'x', list: [1, 2, 3], n: 1 };
      let version = await written(store.write(s, 'k', before, { kind: 'absent' }));
      const next: HotValue = { list: [2, 3, 4], n: undefined, gone: undefined, kept: [undefined, 1] };
      version = await written(store.write(s, 'k', next, { kind: 'version', version, previous: before }));
      const stored = { list: [2, 3, 4], kept: [null, 1] };
      expect(await store.read(s, 'k')).toStrictEqual({ key: 'k', value: stored, version });
      expect(await (opened.other ?? store).read(s, 'k')).toStrictEqual({ key: 'k', value: stored, version });
    });

    it('applies a version write as the value written when the previous value given is older than that version', async () => {
      const s = session();
      const first: HotValue = { list: [1, 2, 3] };
      let version = await written(store.write(s, 'k', first, { kind: 'absent' }));
      const second: HotValue = { list: [1, 2, 3, 4] };
      version = await written(store.write(s, 'k', second, { kind: 'version', version, previous: first }));
      // The caller's previous value is older than the version it names, which this client wrote itself.
      const third: HotValue = { list: [2, 3, 4, 5] };
      version = await written(store.write(s, 'k', third, { kind: 'version', version, previous: first }));
      expect(await store.read(s, 'k')).toStrictEqual({ key: 'k', value: third, version });
      expect((await (opened.other ?? store).read(s, 'k'))?.value).toStrictEqual(third);
    });

    it('shares no object with its caller: changing one after a write or a read changes nothing stored', async () => {
      const s = session();
      const value = { list: [{ n: 1 }], nested: { a: 1 } };
      const version = await written(store.write(s, 'k', value, { kind: 'absent' }));
      value.list.push({ n: 2 });
      value.nested.a = 2;
      const read = await store.read(s, 'k');
      expect(read).toStrictEqual({ key: 'k', value: { list: [{ n: 1 }], nested: { a: 1 } }, version });
      (read?.value.list as { n: number }[]).push({ n: 3 });
      expect(await store.read(s, 'k')).toStrictEqual({
        key: 'k',
        value: { list: [{ n: 1 }], nested: { a: 1 } },
        version,
      });
    });

    it('lists the entries under a prefix in key order, of that session only', async () => {
      const s = session();
      const other = session();
      for (const key of ['turn.a.round.2', 'turn.a', 'turn.a.round.10', 'x.turn.a.round.1', 'turn.b.round.1'])
        await store.write(s, key, { key }, { kind: 'any' });
      await store.write(other, 'turn.a.round.3', { key: 'elsewhere' }, { kind: 'any' });
      const listed = await store.list(s, 'turn.a.round.');
      expect(listed.map((entry) => entry.key)).toEqual(['turn.a.round.10', 'turn.a.round.2']);
      expect(listed.map((entry) => entry.value)).toEqual([
        { key: 'turn.a.round.10' },
        { key: 'turn.a.round.2' },
      ]);
      // A listed version is one a conditional write can name.
      const first = listed[0]!;
      expect(
        (await store.write(s, first.key, { n: 1 }, { kind: 'version', version: first.version })).kind,
      ).toBe('written');
      expect((await store.list(s, '')).map((entry) => entry.key)).toEqual([
        'turn.a',
        'turn.a.round.10',
        'turn.a.round.2',
        'turn.b.round.1',
        'x.turn.a.round.1',
      ]);
    });

    it("deletes all and only the session's entries", async () => {
      const s = session();
      const other = session();
      await store.write(s, 'a', { n: 1 }, { kind: 'any' });
      await store.write(s, 'b.c', { n: 2 }, { kind: 'any' });
      await store.write(other, 'a', { n: 3 }, { kind: 'any' });
      expect(await store.deleteSession(s)).toBe(2);
      expect(await store.list(s, '')).toEqual([]);
      expect(await store.read(s, 'a')).toBeUndefined();
      expect((await store.read(other, 'a'))?.value).toEqual({ n: 3 });
      expect(await store.deleteSession(s)).toBe(0); // nothing left: no failure
      expect(await store.deleteSession(session())).toBe(0);
      expect((await store.write(s, 'a', { n: 4 }, { kind: 'absent' })).kind).toBe('written');
    });

    it('refuses a value over the bound, a bad key and a reserved name, writing nothing', async () => {
      const s = session();
      const oversize = { text: 'x'.repeat(HOT_VALUE_MAX_BYTES) };
      await expect(store.write(s, 'big', oversize, { kind: 'any' })).rejects.toBeInstanceOf(ValidationError);
      for (const key of ['', '.', '..', 'a/b', 'a%2e', 'a b', 'a#b', 'x'.repeat(256)])
        await expect(store.write(s, key, { n: 1 }, { kind: 'any' })).rejects.toBeInstanceOf(ValidationError);
      for (const value of [{ id: 'x' }, { sessionId: 'x' }, { ttl: 1 }, { _etag: 'x' }])
        await expect(store.write(s, 'k', value, { kind: 'any' })).rejects.toBeInstanceOf(ValidationError);
      expect(await store.list(s, '')).toEqual([]);
      // Just within the bound is fine.
      const within = { text: 'y'.repeat(HOT_VALUE_MAX_BYTES - 20) };
      await written(store.write(s, 'big', within, { kind: 'any' }));
      expect((await store.read(s, 'big'))?.value).toStrictEqual(within);
    });

    it('returns values exactly as written', async () => {
      const s = session();
      const value: HotValue = {
        text: 'naïve café 😀 \u2028 "quoted" \\ back\nline \u0000',
        empty: [],
        emptyObject: {},
        nested: { list: [{ a: [[], [1.5, -2, 0]] }, null, true, false], deep: { deeper: { deepest: 'x' } } },
        number: 12345678901234,
        userId: 'user_001',
        kind: 'working-memory',
      };
      const version = await written(store.write(s, 'k', value, { kind: 'absent' }));
      expect(await store.read(s, 'k')).toStrictEqual({ key: 'k', value, version });
      expect(await store.list(s, 'k')).toStrictEqual([{ key: 'k', value, version }]);
    });

    it('lets exactly one of concurrent conditional writes win', async () => {
      const s = session();
      const creates = await Promise.all(
        Array.from({ length: 6 }, (_, i) => store.write(s, 'k', { writer: i }, { kind: 'absent' })),
      );
      expect(creates.filter((result) => result.kind === 'written')).toHaveLength(1);
      const current = await store.read(s, 'k');
      if (current === undefined) throw new Error('missing');
      const updates = await Promise.all(
        Array.from({ length: 6 }, (_, i) =>
          store.write(s, 'k', { writer: 10 + i }, { kind: 'version', version: current.version }),
        ),
      );
      const winners = updates.flatMap((result, i) => (result.kind === 'written' ? [{ i, ...result }] : []));
      expect(winners).toHaveLength(1);
      expect(await store.read(s, 'k')).toEqual({
        key: 'k',
        value: { writer: 10 + winners[0]!.i },
        version: winners[0]!.version,
      });
    });

    // From here on an adapter may move a clock that the cases above had no need of.
    it("keeps an entry written with a longer ttlSeconds past the store's TTL while its session is written", async () => {
      const s = session();
      // Written once and never again (as a working memory base is), then named by a later write of its session.
      await written(
        store.write(s, 'long', { n: 1 }, { kind: 'absent' }, { ttlSeconds: CONTRACT_TTL_SECONDS * 3 }),
      );
      await written(store.write(s, 'short', { n: 1 }, { kind: 'absent' }));
      await opened.advance(CONTRACT_TTL_SECONDS * 0.6);
      const short = await store.read(s, 'short');
      if (short === undefined) throw new Error('expired too soon');
      await written(store.write(s, 'short', { n: 2 }, { kind: 'version', version: short.version }));
      await opened.advance(CONTRACT_TTL_SECONDS * 0.6);
      // Past the store's TTL since it was written: kept, as long as the entry written after it.
      expect((await store.read(s, 'long'))?.value).toEqual({ n: 1 });
      expect((await store.read(s, 'short'))?.value).toEqual({ n: 2 });
      await opened.advance(CONTRACT_TTL_SECONDS * 3);
      expect(await store.read(s, 'long')).toBeUndefined();
    });

    // Last: it moves the clock past every lifetime above.
    it('forgets an entry not written for the TTL, and a write restarts it', async () => {
      const s = session();
      await written(store.write(s, 'short', { n: 1 }, { kind: 'absent' }));
      await written(store.write(s, 'kept', { n: 1 }, { kind: 'absent' }));
      await opened.advance(CONTRACT_TTL_SECONDS * 0.6);
      const kept = await store.read(s, 'kept');
      if (kept === undefined) throw new Error('expired too soon');
      await written(store.write(s, 'kept', { n: 2 }, { kind: 'version', version: kept.version }));
      await opened.advance(CONTRACT_TTL_SECONDS * 0.6);
      expect((await store.read(s, 'kept'))?.value).toEqual({ n: 2 });
      // Another session's entry, written once, is gone (an adapter may keep a session's entries together).
      const lone = session();
      await written(store.write(lone, 'once', { n: 1 }, { kind: 'absent' }));
      await opened.advance(CONTRACT_TTL_SECONDS * 1.2);
      expect(await store.read(lone, 'once')).toBeUndefined();
      expect(await store.list(lone, '')).toEqual([]);
      expect(await store.read(s, 'kept')).toBeUndefined();
      expect(await store.read(s, 'short')).toBeUndefined();
      // Expired is absent: it can be created again.
      expect((await store.write(lone, 'once', { n: 2 }, { kind: 'absent' })).kind).toBe('written');
    });
  });
}

async function written(result: Promise<Awaited<ReturnType<HotStore['write']>>>): Promise<string> {
  const settled = await result;
  if (settled.kind !== 'written') throw new Error(`expected a write, got ${settled.kind}`);
  return settled.version;
}
