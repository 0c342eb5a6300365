// "Download all my data": the request starts one job per archive; the job writes the archive to Blob Storage and
// marks it ready; the owner reads its status and a link; the archive is deleted when it expires or on erase.
import { randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { createGzip } from 'node:zlib';
import type { OrchestrationClient } from '../durable/orchestration-client.js';
import { ConflictError, NotFoundError } from '../errors.js';
import { tarBlocks } from '../tar-archive.js';
import { archiveEntries, type ArchiveCounts, type ArchiveSources } from './archive-contents.js';
import type { ArchiveStore } from './archive-store.js';
import {
  ACCOUNT_EXPORT_ORCHESTRATION,
  exportInstanceId,
  type ExportJobInput,
  type ExportRecord,
  type ExportView,
} from './contracts.js';
import type { ExportRecords } from './export-records.js';

/** How long a signed link to a ready archive works (capped by the archive's own expiry). */
export const SIGNED_LINK_SECONDS = 15 * 60;

export interface ExportServices {
  records: ExportRecords;
  archives: ArchiveStore;
  settings: { ttlHours: number; link: 'app' | 'sas' };
  now?: () => Date;
}

export interface ExportJobServices extends ExportServices {
  sources: ArchiveSources;
}

/** Records the archive as running and starts its job; the record is written first, so the job always finds it. */
export async function requestExport(
  services: ExportServices & { orchestrations: OrchestrationClient },
  userId: string,
): Promise<ExportView> {
  const now = (services.now ?? (() => new Date()))();
  const exportId = randomBytes(12).toString('hex');
  const ttl = services.settings.ttlHours * 60 * 60;
  const record: ExportRecord = {
    id: exportId,
    kind: 'account-export',
    userId,
    status: 'running',
    createdAt: now.toISOString(),
    expiresAt: new Date(now.getTime() + ttl * 1000).toISOString(),
    ttl,
  };
  await services.records.put(record);
  const input: ExportJobInput = { userId, exportId, expiresAt: record.expiresAt };
  await services.orchestrations.startNew(ACCOUNT_EXPORT_ORCHESTRATION, {
    instanceId: exportInstanceId(exportId),
    input,
  });
  return view(record, undefined);
}

/** The archive's status, and once it is ready a link to it; another user's id is unknown (404). */
export async function exportStatus(
  services: ExportServices,
  userId: string,
  exportId: string,
): Promise<ExportView> {
  const record = await requireRecord(services.records, userId, exportId);
  if (record.status !== 'ready') return view(record, undefined);
  const now = (services.now ?? (() => new Date()))();
  const expiresAt = new Date(
    Math.min(now.getTime() + SIGNED_LINK_SECONDS * 1000, Date.parse(record.expiresAt)),
  );
  const url =
    services.settings.link === 'sas'
      ? await services.archives.signedUrl(userId, exportId, expiresAt)
      : archiveRoute(userId, exportId);
  return view(record, {
    url,
    expiresAt: (services.settings.link === 'sas' ? expiresAt : new Date(record.expiresAt)).toISOString(),
  });
}

/** The archive's bytes for its owner; 404 while it is being written, once it expired, or for another user. */
export async function openArchive(
  services: ExportServices,
  userId: string,
  exportId: string,
): Promise<{ body: ReadableStream<Uint8Array>; bytes: number; fileName: string }> {
  const record = await requireRecord(services.records, userId, exportId);
  if (record.status !== 'ready') throw new ConflictError(`Data archive '${exportId}' is ${record.status}.`);
  const file = await services.archives.open(userId, exportId);
  if (file === undefined) throw notFound(exportId);
  return { ...file, fileName: `my-data-${exportId}.tar.gz` };
}

/**
 * The job's work: writes the archive (again, whole, if a crash cut the last try) and marks it ready. Nothing when
 * the record is gone (the user was erased, or it expired) or the archive is ready already (a redelivery).
 */
export async function writeExport(
  services: ExportJobServices,
  input: ExportJobInput,
): Promise<ArchiveCounts | undefined> {
  const record = await services.records.find(input.userId, input.exportId);
  if (record === undefined) return undefined;
  if (record.status === 'ready') return record.contents;
  const counts: ArchiveCounts = { conversations: 0, memoryLines: 0, documents: 0, attachments: 0 };
  const gzip = Readable.from(tarBlocks(archiveEntries(services.sources, input.userId, counts))).pipe(
    createGzip(),
  );
  const bytes = await services.archives.write(input.userId, input.exportId, gzip);
  const now = (services.now ?? (() => new Date()))();
  const ready: ExportRecord = {
    ...record,
    status: 'ready',
    readyAt: now.toISOString(),
    bytes,
    contents: counts,
    ttl: secondsLeft(record, now),
  };
  // An erase that ran while the archive was written deleted its record: the archive goes with it.
  if (!(await services.records.update(ready))) {
    await services.archives.delete(input.userId, input.exportId);
    return undefined;
  }
  return counts;
}

/** The job gave up: the record says so (an archive half written was never committed). */
export async function failExport(
  services: ExportServices,
  input: ExportJobInput,
  reason: string,
): Promise<void> {
  const record = await services.records.find(input.userId, input.exportId);
  if (record === undefined || record.status === 'ready') return;
  const now = (services.now ?? (() => new Date()))();
  const failed: ExportRecord = { ...record, status: 'failed', error: reason.slice(0, 500) };
  await services.records.update({ ...failed, ttl: secondsLeft(record, now) });
}

/** The archive's time is up: its blob goes (its record expires by its own `ttl`). */
export async function expireExport(
  services: Pick<ExportServices, 'archives'>,
  input: ExportJobInput,
): Promise<void> {
  await services.archives.delete(input.userId, input.exportId);
}

/** Erase: every archive of the user goes, with its record; their jobs find nothing left to do. */
export async function eraseExports(
  services: Pick<ExportServices, 'archives' | 'records'>,
  userId: string,
): Promise<{ records: ExportRecord[]; archives: number }> {
  const records = await services.records.list(userId);
  const archives = await services.archives.deleteUser(userId);
  return { records, archives };
}

/** A record's `ttl` counts from its last write: a rewrite keeps the expiry it was given. */
function secondsLeft(record: ExportRecord, now: Date): number {
  return Math.max(1, Math.ceil((Date.parse(record.expiresAt) - now.getTime()) / 1000));
}

export function archiveRoute(userId: string, exportId: string): string {
  return `/api/account/users/${encodeURIComponent(userId)}/export/${exportId}/archive`;
}

async function requireRecord(
  records: ExportRecords,
  userId: string,
  exportId: string,
): Promise<ExportRecord> {
  const record = await records.find(userId, exportId);
  if (record === undefined) throw notFound(exportId);
  return record;
}

const notFound = (exportId: string) =>
  new NotFoundError(`No data archive '${exportId}': unknown, expired, or not yours.`);

function view(record: ExportRecord, download: ExportView['download']): ExportView {
  return {
    exportId: record.id,
    status: record.status,
    createdAt: record.createdAt,
    expiresAt: record.expiresAt,
    ...(record.bytes === undefined ? {} : { bytes: record.bytes }),
    ...(record.contents === undefined ? {} : { contents: record.contents }),
    ...(record.error === undefined ? {} : { error: record.error }),
    ...(download === undefined ? {} : { download }),
  };
}
