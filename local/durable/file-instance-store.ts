// An InstanceStore kept on disk, as the task hub keeps instances in storage: records live in memory, each change is
// one journal record (the changed instance only) written at once with group commit, and flush() is the barrier a
// client call waits on. A snapshot of all instances is written in chunks when the journal has grown, and on close.
import { CorruptDataFileError } from '../persistence/data-file.js';
import { SnapshotJournal, type SnapshotJournalStats } from '../persistence/snapshot-journal.js';
import {
  fromInstanceFile,
  fromSavedRecord,
  instanceFilePieces,
  instanceFileSchema,
  instanceJournalRecordSchema,
  type InstanceJournalRecord,
} from './instance-file.js';
import { expiredInstanceIds, type InstanceRecord, type InstanceStore } from './instance-store.js';

const DATA_FILE_KIND = 'local Durable Functions state';

export interface FileInstanceStoreOptions {
  /** No longer used: every change is written at once (group-committed); kept so older callers still compile. */
  flushDelayMs?: number;
  /** A background compaction failed; the journal still holds everything and the next one retries. */
  onSaveError?: (error: unknown) => void;
  /** When the journal is compacted into a new snapshot (defaults: 4 MiB and 1 × the snapshot's size). */
  compaction?: { minJournalBytes?: number; journalToSnapshotRatio?: number };
}

export class FileInstanceStore implements InstanceStore {
  readonly #file: string;
  /** Records are replaced on put, never changed in place, so a snapshot can hold them while it writes. */
  readonly #records: Map<string, InstanceRecord>;
  readonly #journal: SnapshotJournal<InstanceJournalRecord>;
  #closed = false;

  /** Loads the snapshot and journal (none is an empty store); rejects with CorruptDataFileError if it cannot. */
  static async open(file: string, options: FileInstanceStoreOptions = {}): Promise<FileInstanceStore> {
    const onSaveError =
      options.onSaveError ??
      ((error: unknown) =>
        console.error(
          `local durable driver: compacting ${file} failed; the journal keeps everything`,
          error,
        ));
    const { journal, state, records } = await SnapshotJournal.open({
      file,
      what: DATA_FILE_KIND,
      stateSchema: instanceFileSchema,
      recordSchema: instanceJournalRecordSchema,
      ...options.compaction,
      onBackgroundError: onSaveError,
    });
    let instances: Map<string, InstanceRecord>;
    try {
      instances = new Map(
        (state ? fromInstanceFile(state) : []).map((record) => [record.instanceId, record]),
      );
    } catch (error) {
      await journal.close({ compact: false });
      throw new CorruptDataFileError(
        file,
        DATA_FILE_KIND,
        `its contents are inconsistent (${(error as Error).message})`,
        { cause: error },
      );
    }
    for (const record of records) {
      if (record.op === 'put') instances.set(record.record.instanceId, fromSavedRecord(record.record));
      else for (const instanceId of record.instanceIds) instances.delete(instanceId);
    }
    return new FileInstanceStore(file, instances, journal);
  }

  private constructor(
    file: string,
    records: Map<string, InstanceRecord>,
    journal: SnapshotJournal<InstanceJournalRecord>,
  ) {
    this.#file = file;
    this.#records = records;
    this.#journal = journal;
    journal.start(() => instanceFilePieces([...this.#records.values()], new Date()));
  }

  get file(): string {
    return this.#file;
  }

  /** The journal's figures, for benchmarks. */
  stats(): SnapshotJournalStats {
    return this.#journal.stats();
  }

  get(instanceId: string): Promise<InstanceRecord | undefined> {
    const record = this.#records.get(instanceId);
    return Promise.resolve(record === undefined ? undefined : structuredClone(record));
  }

  /** Resolves at once; the record is on its way to disk, and flush() waits until it is there. */
  put(record: InstanceRecord): Promise<void> {
    if (this.#closed) return Promise.reject(new Error(`The durable data file ${this.#file} is closed.`));
    const copy = structuredClone(record);
    this.#records.set(record.instanceId, copy);
    this.#append({ op: 'put', record: copy });
    return Promise.resolve();
  }

  list(): Promise<InstanceRecord[]> {
    return Promise.resolve([...this.#records.values()].map((record) => structuredClone(record)));
  }

  delete(instanceId: string): Promise<boolean> {
    if (this.#closed || !this.#records.delete(instanceId)) return Promise.resolve(false);
    this.#append({ op: 'delete', instanceIds: [instanceId] });
    return Promise.resolve(true);
  }

  purgeFinished(before: Date): Promise<string[]> {
    const expired = this.#closed ? [] : expiredInstanceIds(this.#records, before);
    for (const instanceId of expired) this.#records.delete(instanceId);
    if (expired.length > 0) this.#append({ op: 'delete', instanceIds: expired });
    return Promise.resolve(expired);
  }

  flush(): Promise<void> {
    return this.#journal.durable();
  }

  async close(): Promise<void> {
    this.#closed = true;
    await this.#journal.close();
  }

  #append(record: InstanceJournalRecord): void {
    // A failure surfaces through flush(), the barrier callers wait on; compaction retries it meanwhile.
    this.#journal.append(record).catch(() => undefined);
  }
}
