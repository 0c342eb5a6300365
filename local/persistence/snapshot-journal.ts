// A local store's data on disk: a snapshot file plus append-only journals of the changes made since. A write costs
// one journal record (group-committed); compaction writes a new snapshot in chunks and starts a new journal, and is
// crash-safe at every step: the snapshot names the first journal it does not hold, and a load replays from there.
import { mkdir, open, readdir, rename, rm, stat } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { z } from 'zod';

import { parseDataFile, readDataFile } from './data-file.js';
import { JournalWriter, readJournal, writeAll } from './journal-file.js';

export interface SnapshotJournalOptions<TState, TRecord> {
  /** The snapshot file; its journals sit beside it as `<file>.<generation>.journal`. */
  file: string;
  /** What the data is, for error messages ("local Cosmos DB data"). */
  what: string;
  stateSchema: z.ZodType<TState>;
  recordSchema: z.ZodType<TRecord>;
  /** Compaction starts once the journals exceed this many bytes... (default 4 MiB) */
  minJournalBytes?: number;
  /** ...and this multiple of the last snapshot's size (default 1), so its cost is amortised over the writes. */
  journalToSnapshotRatio?: number;
  /** A background compaction failed; the journals still hold everything, and the next one retries. */
  onBackgroundError?: (error: unknown) => void;
}

export interface OpenedSnapshotJournal<TState, TRecord> {
  journal: SnapshotJournal<TRecord>;
  /** The snapshot's state, undefined when there is none yet. */
  state: TState | undefined;
  /** The journalled changes since the snapshot, oldest first: apply them to `state` in order. */
  records: TRecord[];
}

/**
 * The state as JSON text, in pieces. The function is called at the instant compaction switches journals and
 * must capture the state then (copying its collections, not its values, which must never change in place);
 * the pieces may be produced later, while writes go on.
 */
export type SnapshotCapture = () => Iterable<string>;

export interface SnapshotJournalStats {
  journalBytes: number;
  snapshotBytes: number;
  syncs: number;
  compactions: number;
  /** Wall time of the last compaction (snapshot written and old journals removed), in ms. */
  lastCompactionMs: number;
}

const DEFAULT_MIN_JOURNAL_BYTES = 4 * 1024 * 1024;
/** Snapshot text is written in chunks of about this size; each write lets the event loop run. */
const SNAPSHOT_CHUNK_CHARS = 256 * 1024;

const envelopeSchema = z.object({
  journalGeneration: z.number().int().nonnegative(),
  savedAt: z.string().optional(),
  state: z.unknown(),
});

export class SnapshotJournal<TRecord> {
  readonly #file: string;
  readonly #minJournalBytes: number;
  readonly #ratio: number;
  readonly #onBackgroundError: (error: unknown) => void;
  #writer: JournalWriter;
  #generation: number;
  /** Journals a compaction switched away from whose snapshot is not written yet (or failed). */
  #retired: JournalWriter[];
  /** The last append to each open journal: waiting for all of them is waiting for everything. */
  readonly #tails = new Map<JournalWriter, Promise<void>>();
  readonly #retiredBy = new WeakMap<JournalWriter, Promise<void>>();
  #capture: SnapshotCapture | undefined;
  #compacting: Promise<void> | undefined;
  #snapshotBytes: number;
  #syncsOfClosed = 0;
  #compactions = 0;
  #lastCompactionMs = 0;
  #closed: Promise<void> | undefined;

  private constructor(
    file: string,
    options: SnapshotJournalOptions<unknown, TRecord>,
    writer: JournalWriter,
    generation: number,
    older: JournalWriter[],
    snapshotBytes: number,
  ) {
    this.#file = file;
    this.#minJournalBytes = options.minJournalBytes ?? DEFAULT_MIN_JOURNAL_BYTES;
    this.#ratio = options.journalToSnapshotRatio ?? 1;
    this.#onBackgroundError =
      options.onBackgroundError ??
      ((error: unknown) =>
        console.error(`${options.what}: compacting ${file} failed; retrying later`, error));
    this.#writer = writer;
    this.#generation = generation;
    this.#retired = older;
    this.#snapshotBytes = snapshotBytes;
  }

  /**
   * Loads the snapshot and the journals after it. A torn last record (a crash mid-append) is dropped; anything
   * else unreadable rejects with CorruptDataFileError and leaves the files as they are. A snapshot written
   * before journals existed (no `journalGeneration`) is read as the state itself.
   */
  static async open<TState, TRecord>(
    options: SnapshotJournalOptions<TState, TRecord>,
  ): Promise<OpenedSnapshotJournal<TState, TRecord>> {
    const { file, what } = options;
    const folder = dirname(file);
    await mkdir(folder, { recursive: true });
    const raw = await readDataFile(file, z.unknown(), what);
    let state: TState | undefined;
    let generation = 0;
    if (raw !== undefined) {
      const isEnvelope = typeof raw === 'object' && raw !== null && 'journalGeneration' in raw;
      const envelope = isEnvelope ? parseDataFile(envelopeSchema, raw, file, what) : undefined;
      generation = envelope?.journalGeneration ?? 0;
      state = parseDataFile(options.stateSchema, envelope ? envelope.state : raw, file, what);
    }
    const snapshotBytes = raw === undefined ? 0 : (await stat(file)).size;

    const journals = await journalGenerations(file);
    const records: TRecord[] = [];
    const live = journals.filter((entry) => entry >= generation);
    const contents: { generation: number; validBytes: number }[] = [];
    for (const entry of live) {
      const path = journalPath(file, entry);
      const read = await readJournal(path, what);
      if (read === undefined) continue;
      for (const record of read.records)
        records.push(parseDataFile(options.recordSchema, record, path, what));
      contents.push({ generation: entry, validBytes: read.validBytes });
    }

    // Everything is loaded: only now is anything on disk changed.
    for (const entry of journals.filter((entry) => entry < generation)) {
      await rm(journalPath(file, entry), { force: true }); // held by the snapshot already
    }
    await removeTempFiles(file);
    const writers: JournalWriter[] = [];
    for (const { generation: entry, validBytes } of contents) {
      writers.push(await JournalWriter.open(journalPath(file, entry), validBytes));
    }
    const activeGeneration = contents.at(-1)?.generation ?? generation;
    const active = writers.pop() ?? (await JournalWriter.open(journalPath(file, activeGeneration)));
    await syncFolder(folder);
    const journal = new SnapshotJournal<TRecord>(
      file,
      options,
      active,
      activeGeneration,
      writers,
      snapshotBytes,
    );
    return { journal, state, records };
  }

  get file(): string {
    return this.#file;
  }

  /** Turns compaction on, with the function that captures the state (called only from compact()). */
  start(capture: SnapshotCapture): void {
    this.#capture = capture;
    this.#compactIfDue();
  }

  /** Resolves once the record is on disk (or held by a snapshot written after a failed journal write). */
  append(record: TRecord): Promise<void> {
    if (this.#closed) return Promise.reject(new Error(`${this.#file} is closed.`));
    const writer = this.#writer;
    const appended = writer
      .append(JSON.stringify(record))
      .catch((error: unknown) => this.#recover(writer, error));
    this.#tails.set(writer, appended);
    this.#compactIfDue();
    return appended;
  }

  /** Resolves once every record appended so far is on disk. */
  async durable(): Promise<void> {
    await Promise.all(this.#tails.values());
  }

  stats(): SnapshotJournalStats {
    const writers = [this.#writer, ...this.#retired];
    return {
      journalBytes: this.#journalBytes(),
      snapshotBytes: this.#snapshotBytes,
      syncs: this.#syncsOfClosed + writers.reduce((sum, writer) => sum + writer.syncs, 0),
      compactions: this.#compactions,
      lastCompactionMs: this.#lastCompactionMs,
    };
  }

  /** Writes a snapshot of the state and starts a new journal (joins one under way). */
  compact(): Promise<void> {
    this.#compacting ??= this.#compactOnce().finally(() => {
      this.#compacting = undefined;
    });
    return this.#compacting;
  }

  /** Waits for pending records, compacts when the journals hold anything (so the next start reads one file), closes. */
  close(options: { compact?: boolean } = {}): Promise<void> {
    this.#closed ??= (async () => {
      await this.#compacting?.catch(() => undefined);
      await this.durable().catch(() => undefined);
      if ((options.compact ?? true) && this.#capture && this.#journalBytes() > 0) {
        await this.compact().catch(this.#onBackgroundError);
      }
      for (const writer of [...this.#retired, this.#writer]) await writer.close();
    })();
    return this.#closed;
  }

  #journalBytes(): number {
    return this.#retired.reduce((sum, writer) => sum + writer.bytes, this.#writer.bytes);
  }

  #compactIfDue(): void {
    if (this.#compacting || !this.#capture || this.#closed) return;
    const bytes = this.#journalBytes();
    if (bytes < this.#minJournalBytes || bytes < this.#ratio * this.#snapshotBytes) return;
    this.compact().catch(this.#onBackgroundError);
  }

  /** A journal write failed: the change is in memory, so a snapshot taken after it holds it. */
  async #recover(writer: JournalWriter, error: unknown): Promise<void> {
    const retiring = this.#retiredBy.get(writer);
    try {
      await (retiring ?? this.compact());
    } catch {
      throw error;
    }
  }

  async #compactOnce(): Promise<void> {
    const capture = this.#capture;
    if (!capture) throw new Error(`${this.#file}: compaction needs start() first.`);
    const started = performance.now();
    const generation = this.#generation + 1;
    const next = await JournalWriter.open(journalPath(this.#file, generation));
    await syncFolder(dirname(this.#file));

    // The switch and the capture happen together: the snapshot holds exactly the records of the old journals.
    const pieces = capture();
    const retired = [...this.#retired, this.#writer];
    this.#writer = next;
    this.#generation = generation;
    this.#retired = retired;
    let finish!: () => void;
    let fail!: (error: unknown) => void;
    const done = new Promise<void>((resolve, reject) => {
      finish = resolve;
      fail = reject;
    });
    done.catch(() => undefined);
    for (const writer of retired) this.#retiredBy.set(writer, done);

    try {
      this.#snapshotBytes = await writeSnapshot(this.#file, generation, pieces);
    } catch (error) {
      fail(error);
      throw error; // the old journals stay: a load still replays them, and the next compaction retries
    }
    finish();
    this.#retired = this.#retired.filter((writer) => !retired.includes(writer));
    for (const writer of retired) {
      await this.#tails.get(writer)?.catch(() => undefined);
      await writer.close();
      this.#tails.delete(writer);
      this.#syncsOfClosed += writer.syncs;
      await rm(writer.file, { force: true });
    }
    this.#compactions++;
    this.#lastCompactionMs = performance.now() - started;
  }
}

export function journalPath(file: string, generation: number): string {
  return `${file}.${generation}.journal`;
}

/** The generations of the journals beside `file`, ascending. */
async function journalGenerations(file: string): Promise<number[]> {
  const prefix = `${basename(file)}.`;
  const names = await readdir(dirname(file));
  return names
    .filter((name) => name.startsWith(prefix) && name.endsWith('.journal'))
    .map((name) => name.slice(prefix.length, -'.journal'.length))
    .filter((middle) => /^\d+$/.test(middle))
    .map(Number)
    .sort((a, b) => a - b);
}

/** Half-written snapshots a crash left behind; the snapshot they would have replaced is intact. */
async function removeTempFiles(file: string): Promise<void> {
  const prefix = `${basename(file)}.`;
  for (const name of await readdir(dirname(file))) {
    if (name.startsWith(prefix) && name.endsWith('.tmp'))
      await rm(join(dirname(file), name), { force: true });
  }
}

let tempCounter = 0;

/** Writes the snapshot beside `file`, then renames it over `file`: a crash leaves either the old or the new one. */
async function writeSnapshot(file: string, generation: number, pieces: Iterable<string>): Promise<number> {
  tempCounter += 1;
  const temp = `${file}.${process.pid}.${tempCounter}.tmp`;
  let bytes = 0;
  try {
    const handle = await open(temp, 'w');
    try {
      let chunk = [`{"journalGeneration":${generation},"savedAt":"${new Date().toISOString()}","state":`];
      let chars = 0;
      const writeChunk = async () => {
        const buffer = Buffer.from(chunk.join(''), 'utf8');
        chunk = [];
        chars = 0;
        bytes += buffer.length;
        await writeAll(handle, buffer);
      };
      for (const piece of pieces) {
        chunk.push(piece);
        chars += piece.length;
        if (chars >= SNAPSHOT_CHUNK_CHARS) await writeChunk();
      }
      chunk.push('}');
      await writeChunk();
      await handle.datasync();
    } finally {
      await handle.close();
    }
    await rename(temp, file);
    await syncFolder(dirname(file));
    return bytes;
  } catch (error) {
    await rm(temp, { force: true });
    throw error;
  }
}

/** Makes a created, renamed or removed name itself durable (the folder's entry), where the platform allows. */
async function syncFolder(folder: string): Promise<void> {
  try {
    const handle = await open(folder, 'r');
    try {
      await handle.sync();
    } finally {
      await handle.close();
    }
  } catch {
    // Some platforms cannot open or fsync a folder; the file's own fsync is what they offer.
  }
}
