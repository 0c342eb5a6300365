// An InstanceStore kept in a JSON data file, as the task hub keeps instances in storage: records live in
// memory, changes are saved in batches (atomically), and flush() is the barrier a client call waits on.
import { CorruptDataFileError, readDataFile, writeDataFile } from '../persistence/data-file.js';
import { FlushScheduler } from '../persistence/flush-scheduler.js';
import { fromInstanceFile, instanceFileSchema, toInstanceFile } from './instance-file.js';
import { expiredInstanceIds, type InstanceRecord, type InstanceStore } from './instance-store.js';

const DATA_FILE_KIND = 'local Durable Functions state';

export interface FileInstanceStoreOptions {
  /** Changes are saved at most this long after they happen, unless flush() saves them sooner (default 100). */
  flushDelayMs?: number;
  /** A background save failed; the next change or flush() saves everything again. */
  onSaveError?: (error: unknown) => void;
}

export class FileInstanceStore implements InstanceStore {
  readonly #file: string;
  /** Records are replaced on put, never changed in place, so a save can hold them while it writes. */
  readonly #records: Map<string, InstanceRecord>;
  readonly #scheduler: FlushScheduler;
  /** Counts changes; a save records the count it wrote, so flush() knows whether it must write. */
  #changes = 0;
  #savedChanges = 0;
  #closed = false;

  /** Loads the file (a missing file is an empty store); rejects with CorruptDataFileError if it cannot. */
  static async open(file: string, options: FileInstanceStoreOptions = {}): Promise<FileInstanceStore> {
    const saved = await readDataFile(file, instanceFileSchema, DATA_FILE_KIND);
    let records: InstanceRecord[] = [];
    if (saved !== undefined) {
      try {
        records = fromInstanceFile(saved);
      } catch (error) {
        throw new CorruptDataFileError(
          file,
          DATA_FILE_KIND,
          `its contents are inconsistent (${(error as Error).message})`,
          { cause: error },
        );
      }
    }
    return new FileInstanceStore(file, records, options);
  }

  private constructor(file: string, records: InstanceRecord[], options: FileInstanceStoreOptions) {
    this.#file = file;
    this.#records = new Map(records.map((record) => [record.instanceId, record]));
    const onSaveError =
      options.onSaveError ??
      ((error: unknown) =>
        console.error(`local durable driver: saving ${file} failed; the next change retries`, error));
    this.#scheduler = new FlushScheduler(() => this.#save(), options.flushDelayMs ?? 100, onSaveError);
  }

  get file(): string {
    return this.#file;
  }

  get(instanceId: string): Promise<InstanceRecord | undefined> {
    const record = this.#records.get(instanceId);
    return Promise.resolve(record === undefined ? undefined : structuredClone(record));
  }

  put(record: InstanceRecord): Promise<void> {
    if (this.#closed) return Promise.reject(new Error(`The durable data file ${this.#file} is closed.`));
    this.#records.set(record.instanceId, structuredClone(record));
    this.#changed();
    return Promise.resolve();
  }

  list(): Promise<InstanceRecord[]> {
    return Promise.resolve([...this.#records.values()].map((record) => structuredClone(record)));
  }

  purgeFinished(before: Date): Promise<string[]> {
    const expired = this.#closed ? [] : expiredInstanceIds(this.#records, before);
    for (const instanceId of expired) this.#records.delete(instanceId);
    if (expired.length > 0) this.#changed();
    return Promise.resolve(expired);
  }

  async flush(): Promise<void> {
    if (this.#savedChanges === this.#changes) return;
    // The save runs after any save under way, so it writes this change; callers arriving meanwhile share it.
    await this.#scheduler.flush();
  }

  async close(): Promise<void> {
    this.#closed = true;
    this.#scheduler.cancel();
    await this.#scheduler.flush();
  }

  #changed(): void {
    this.#changes++;
    this.#scheduler.markDirty();
  }

  async #save(): Promise<void> {
    const changes = this.#changes;
    if (changes === this.#savedChanges) return;
    await writeDataFile(this.#file, toInstanceFile(this.#records.values(), new Date()));
    this.#savedChanges = Math.max(this.#savedChanges, changes);
  }
}
