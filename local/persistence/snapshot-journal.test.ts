// The journal and snapshot files under the local stores: group commit, torn tails, corruption, and compaction that
// keeps the data and leaves a loadable state whatever step a crash interrupts.
import { appendFile, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';

import { CorruptDataFileError } from './data-file.js';
import { encodeRecord, JournalWriter, readJournal } from './journal-file.js';
import { journalPath, SnapshotJournal } from './snapshot-journal.js';

const stateSchema = z.object({ items: z.record(z.string(), z.number()) });
const recordSchema = z.object({ key: z.string(), value: z.number() });
type Entry = z.infer<typeof recordSchema>;

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'snapshot-journal-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** A tiny store on a SnapshotJournal: a map of numbers, one record per set. */
async function openStore(file: string, options: { minJournalBytes?: number } = {}) {
  const opened = await SnapshotJournal.open({
    file,
    what: 'test data',
    stateSchema,
    recordSchema,
    ...options,
  });
  const items = new Map(Object.entries(opened.state?.items ?? {}));
  for (const { key, value } of opened.records) items.set(key, value);
  opened.journal.start(() => {
    const captured = [...items];
    return (function* () {
      yield '{"items":{';
      for (const [index, [key, value]] of captured.entries())
        yield `${index ? ',' : ''}${JSON.stringify(key)}:${value}`;
      yield '}}';
    })();
  });
  return {
    journal: opened.journal,
    items,
    set(key: string, value: number) {
      items.set(key, value);
      return opened.journal.append({ key, value } satisfies Entry);
    },
  };
}

describe('JournalWriter', () => {
  it('shares one fsync among the records appended while another is under way', async () => {
    const writer = await JournalWriter.open(join(dir, 'j.journal'));
    const appended = Array.from({ length: 100 }, (_, i) => writer.append(JSON.stringify({ i })));
    await Promise.all(appended);
    // The first record starts a write at once; the other 99 arrive while it runs and share the next fsync.
    expect(writer.syncs).toBe(2);
    await writer.close();
    expect((await readJournal(join(dir, 'j.journal'), 'test'))?.records).toHaveLength(100);
  });

  it('durable() waits for everything appended before it, and resolves at once when nothing is pending', async () => {
    const writer = await JournalWriter.open(join(dir, 'j.journal'));
    void writer.append('{"a":1}');
    void writer.append('{"a":2}');
    await writer.durable();
    expect((await readJournal(join(dir, 'j.journal'), 'test'))?.records).toEqual([{ a: 1 }, { a: 2 }]);
    await writer.durable();
    await writer.close();
  });
});

describe('readJournal', () => {
  it('drops a torn last record (a crash mid-append) and reports where the whole records end', async () => {
    const file = join(dir, 't.journal');
    const whole = encodeRecord('{"key":"a","value":1}');
    await writeFile(file, whole + encodeRecord('{"key":"b","value":2}').slice(0, 12));
    expect(await readJournal(file, 'test')).toEqual({
      records: [{ key: 'a', value: 1 }],
      validBytes: Buffer.byteLength(whole),
      tornBytes: 12,
    });
  });

  it('treats a damaged record followed by a whole one as corruption', async () => {
    const file = join(dir, 'c.journal');
    const damaged = encodeRecord('{"key":"a","value":1}').replace('"a"', '"x"');
    await writeFile(file, damaged + encodeRecord('{"key":"b","value":2}'));
    await expect(readJournal(file, 'test')).rejects.toBeInstanceOf(CorruptDataFileError);
  });
});

describe('SnapshotJournal', () => {
  it('replays the journal after a restart without a clean close, and cuts a torn tail before appending', async () => {
    const file = join(dir, 'data.json');
    const first = await openStore(file);
    await first.set('a', 1);
    await first.set('b', 2);
    // No close: the process "dies". Then half a record lands at the end, as a crash mid-write leaves it.
    await appendFile(journalPath(file, 0), encodeRecord('{"key":"c","value":3}').slice(0, 9));

    const second = await openStore(file);
    expect(Object.fromEntries(second.items)).toEqual({ a: 1, b: 2 });
    await second.set('d', 4);
    const third = await openStore(join(dir, 'data.json'));
    expect(Object.fromEntries(third.items)).toEqual({ a: 1, b: 2, d: 4 });
    await Promise.all([first.journal.close({ compact: false }), second.journal.close({ compact: false })]);
    await third.journal.close({ compact: false });
  });

  it('compacts into a snapshot and a new journal, keeping every change made during the compaction', async () => {
    const file = join(dir, 'data.json');
    const store = await openStore(file);
    for (let i = 0; i < 50; i++) await store.set(`k${i}`, i);
    const compaction = store.journal.compact();
    const during = store.set('during', 99); // lands in the new journal
    await Promise.all([compaction, during]);
    expect(await readdir(dir)).toEqual(['data.json', 'data.json.1.journal']);
    expect(JSON.parse(await readFile(file, 'utf8'))).toMatchObject({ journalGeneration: 1 });

    const reopened = await openStore(file);
    expect(reopened.items.size).toBe(51);
    expect(reopened.items.get('during')).toBe(99);
    await store.journal.close({ compact: false });
    await reopened.journal.close({ compact: false });
  });

  it('compacts by itself once the journal outgrows the threshold', async () => {
    const file = join(dir, 'data.json');
    const store = await openStore(file, { minJournalBytes: 2000 });
    for (let i = 0; i < 200; i++) await store.set('same', i);
    await store.journal.close({ compact: false });
    const { compactions, journalBytes } = store.journal.stats();
    expect(compactions).toBeGreaterThan(0);
    expect(journalBytes).toBeLessThan(2000 + 100);
    expect((await openStore(file)).items.get('same')).toBe(199);
  });

  describe('a crash during compaction leaves a loadable state', () => {
    /** Data as compaction leaves it on disk: snapshot `generation` with `items`, and the given journals. */
    async function leave(
      file: string,
      snapshot: { generation: number; items: Record<string, number> } | undefined,
      journals: Record<number, Entry[]>,
    ) {
      if (snapshot)
        await writeFile(
          file,
          JSON.stringify({ journalGeneration: snapshot.generation, state: { items: snapshot.items } }),
        );
      for (const [generation, entries] of Object.entries(journals)) {
        await writeFile(
          journalPath(file, Number(generation)),
          entries.map((e) => encodeRecord(JSON.stringify(e))).join(''),
        );
      }
    }

    it('after the new journal was started, before the snapshot was renamed: both journals replay in order', async () => {
      const file = join(dir, 'data.json');
      await leave(
        file,
        { generation: 0, items: { a: 1 } },
        { 0: [{ key: 'a', value: 2 }], 1: [{ key: 'a', value: 3 }] },
      );
      await writeFile(`${file}.4242.1.tmp`, '{"journalGeneration":1,"state":{"it'); // the half-written snapshot
      const store = await openStore(file);
      expect(store.items.get('a')).toBe(3);
      expect((await readdir(dir)).filter((name) => name.endsWith('.tmp'))).toEqual([]);
      await store.journal.close({ compact: false });
    });

    it('after the snapshot was renamed, before the old journal was removed: the old journal is not replayed', async () => {
      const file = join(dir, 'data.json');
      // The old journal's change (a = 2) is in the snapshot already, and a = 3 came after it.
      await leave(file, { generation: 1, items: { a: 3 } }, { 0: [{ key: 'a', value: 2 }], 1: [] });
      const store = await openStore(file);
      expect(store.items.get('a')).toBe(3);
      expect(await readdir(dir)).not.toContain('data.json.0.journal');
      await store.journal.close({ compact: false });
    });

    it('reads a snapshot written before journals existed as the state itself', async () => {
      const file = join(dir, 'data.json');
      await writeFile(file, JSON.stringify({ items: { old: 7 } }));
      const store = await openStore(file);
      expect(store.items.get('old')).toBe(7);
      await store.journal.close({ compact: false });
    });
  });
});
