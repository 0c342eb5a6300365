// The port of data archives' records (container `account-exports`, partition userId): what a user's archive job
// is doing, read by the status route, written by the job.
import type { ExportRecord } from './contracts.js';

export interface ExportRecords {
  /** Writes the record whole (a job run again writes the same). */
  put(record: ExportRecord): Promise<void>;
  /** Replaces the record only if it is still there; false when it is gone (erased, or expired). */
  update(record: ExportRecord): Promise<boolean>;
  /** The user's record; undefined for an unknown id, an expired record or another user's. */
  find(userId: string, exportId: string): Promise<ExportRecord | undefined>;
  /** Every record of the user. */
  list(userId: string): Promise<ExportRecord[]>;
}
