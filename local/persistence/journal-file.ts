// An append-only journal file of JSON records, one per line with a CRC, made durable by group commit: records
// appended while an fsync is under way share the next one, so a burst of writes costs a few fsyncs, not one each.
import { open, readFile, type FileHandle } from 'node:fs/promises';
import { crc32 } from 'node:zlib';

import { CorruptDataFileError } from './data-file.js';

/** One journal line: the CRC-32 of the JSON text (8 hex digits), a space, the JSON text, a newline. */
export function encodeRecord(json: string): string {
  return `${crc32(json).toString(16).padStart(8, '0')} ${json}\n`;
}

export interface JournalContents {
  /** The records' JSON values, in the order they were appended. */
  records: unknown[];
  /** Bytes up to the end of the last whole record; anything after it is a torn write to cut off. */
  validBytes: number;
  /** Bytes after `validBytes`: the record a crash interrupted (never acknowledged), or 0. */
  tornBytes: number;
}

/**
 * Reads a journal. A damaged last record is what a crash mid-append leaves (it was never acknowledged) and is
 * reported as torn; a damaged record followed by whole ones is corruption, and throws CorruptDataFileError.
 */
export async function readJournal(file: string, what: string): Promise<JournalContents | undefined> {
  let bytes: Buffer;
  try {
    bytes = await readFile(file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  const records: unknown[] = [];
  let offset = 0;
  while (offset < bytes.length) {
    const end = bytes.indexOf(0x0a, offset);
    const line = bytes.subarray(offset, end === -1 ? bytes.length : end).toString('utf8');
    const record = end === -1 ? undefined : decodeRecord(line);
    if (record === undefined) {
      // Only the tail may be damaged (a crash mid-append); a whole record after it means it was not the last write.
      if (hasWholeRecordAfter(bytes, offset)) {
        throw new CorruptDataFileError(file, what, `its record at byte ${offset} is damaged`);
      }
      return { records, validBytes: offset, tornBytes: bytes.length - offset };
    }
    records.push(record.value);
    offset = end + 1;
  }
  return { records, validBytes: offset, tornBytes: 0 };
}

function hasWholeRecordAfter(bytes: Buffer, damagedAt: number): boolean {
  let offset = bytes.indexOf(0x0a, damagedAt);
  while (offset !== -1 && offset + 1 < bytes.length) {
    const end = bytes.indexOf(0x0a, offset + 1);
    if (end === -1) return false;
    if (decodeRecord(bytes.subarray(offset + 1, end).toString('utf8')) !== undefined) return true;
    offset = end;
  }
  return false;
}

function decodeRecord(line: string): { value: unknown } | undefined {
  if (line.length < 10 || line[8] !== ' ') return undefined;
  const json = line.slice(9);
  if (Number.parseInt(line.slice(0, 8), 16) !== crc32(json)) return undefined;
  try {
    return { value: JSON.parse(json) as unknown };
  } catch {
    return undefined;
  }
}

interface Batch {
  promise: Promise<void>;
  resolve: () => void;
  reject: (error: unknown) => void;
}

function newBatch(): Batch {
  let resolve!: () => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<void>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  // A batch nobody waits on (a background record) must not become an unhandled rejection.
  promise.catch(() => undefined);
  return { promise, resolve, reject };
}

/** Appends records to one journal file. After a failed write it refuses further records (the tail is unknown). */
export class JournalWriter {
  readonly #handle: FileHandle;
  #pending: string[] = [];
  #next: Batch | undefined;
  #inFlight: Batch | undefined;
  #bytes: number;
  #syncs = 0;
  #failure: unknown;
  #closing: Promise<void> | undefined;

  private constructor(
    readonly file: string,
    handle: FileHandle,
    bytes: number,
  ) {
    this.#handle = handle;
    this.#bytes = bytes;
  }

  /**
   * Opens a journal for appending, creating it if missing. `validBytes` cuts off a torn tail first, so new
   * records never follow half a record.
   */
  static async open(file: string, validBytes = 0): Promise<JournalWriter> {
    const handle = await open(file, 'a+');
    try {
      const { size } = await handle.stat();
      if (size !== validBytes) {
        await handle.truncate(validBytes);
        await handle.datasync();
      }
      return new JournalWriter(file, handle, validBytes);
    } catch (error) {
      await handle.close();
      throw error;
    }
  }

  /** Bytes in the file, pending records included. */
  get bytes(): number {
    return this.#bytes;
  }

  /** fsyncs done so far: fewer than appends when group commit shares them. */
  get syncs(): number {
    return this.#syncs;
  }

  get failed(): boolean {
    return this.#failure !== undefined;
  }

  /** Resolves once `json` (one record's JSON text) is on disk, with every record appended before it. */
  append(json: string): Promise<void> {
    if (this.#failure !== undefined) return Promise.reject(ensureFailure(this.#failure));
    if (this.#closing) return Promise.reject(new Error(`The journal ${this.file} is closed.`));
    const line = encodeRecord(json);
    this.#pending.push(line);
    this.#bytes += Buffer.byteLength(line);
    this.#next ??= newBatch();
    const batch = this.#next;
    if (this.#inFlight === undefined) void this.#drain();
    return batch.promise;
  }

  /** Resolves once everything appended so far is on disk (at once when nothing is pending). */
  durable(): Promise<void> {
    return (this.#next ?? this.#inFlight)?.promise ?? Promise.resolve();
  }

  /** Waits for pending records, then closes the file. */
  close(): Promise<void> {
    this.#closing ??= (async () => {
      await this.durable().catch(() => undefined);
      await this.#handle.close();
    })();
    return this.#closing;
  }

  async #drain(): Promise<void> {
    while (this.#next !== undefined) {
      const batch = this.#next;
      const lines = this.#pending;
      this.#next = undefined;
      this.#pending = [];
      this.#inFlight = batch;
      try {
        if (this.#failure !== undefined) throw ensureFailure(this.#failure);
        await writeAll(this.#handle, Buffer.from(lines.join(''), 'utf8'));
        await this.#handle.datasync();
        this.#syncs++;
        batch.resolve();
      } catch (error) {
        this.#failure ??= error;
        batch.reject(error);
      }
    }
    this.#inFlight = undefined;
  }
}

export async function writeAll(handle: FileHandle, buffer: Buffer): Promise<void> {
  let offset = 0;
  while (offset < buffer.length) {
    const { bytesWritten } = await handle.write(buffer, offset, buffer.length - offset);
    offset += bytesWritten;
  }
}

function ensureFailure(error: unknown): Error {
  return error instanceof Error ? error : new Error(String(error));
}
