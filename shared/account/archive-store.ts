// The port of data archives' bytes: one gzip'd tar per archive, kept under its user (Blob Storage in the product).
import type { Readable } from 'node:stream';

export interface ArchiveStore {
  /** Writes the archive whole, replacing one written before under the same id; its size in bytes. */
  write(userId: string, exportId: string, content: Readable): Promise<number>;
  /** The archive's bytes as a stream; undefined when it is gone or was never written. */
  open(
    userId: string,
    exportId: string,
  ): Promise<{ body: ReadableStream<Uint8Array>; bytes: number } | undefined>;
  /** A read-only URL to the archive that works without the app until `expiresOn` (a user delegation SAS). */
  signedUrl(userId: string, exportId: string, expiresOn: Date): Promise<string>;
  /** Deletes the archive (nothing happens when it is gone). */
  delete(userId: string, exportId: string): Promise<void>;
  /** Deletes every archive of the user; how many. */
  deleteUser(userId: string): Promise<number>;
}
