// The account area's declarations: the data archive's record (container `account-exports`), its job's
// orchestration and activities, and what the API answers about an archive.
import { z } from 'zod';
import type { ContainerSpec } from '../cosmos/container-spec.js';

export const ACCOUNT_EXPORTS_CONTAINER = 'account-exports';

export const accountContainers: readonly ContainerSpec[] = [
  {
    id: ACCOUNT_EXPORTS_CONTAINER,
    partitionKeyPaths: ['/userId'],
    // Each record sets its own `ttl`: it expires with its archive.
    defaultTtlSeconds: -1,
    purpose: "Data archives a user asked for: one record per archive, expiring with the archive's link.",
  },
];

/** An archive's id: made by the server, used in a URL, a blob name and an orchestration's instance id. */
export const exportIdSchema = z
  .string()
  .regex(/^[a-z0-9]{8,40}$/, 'must be 8-40 lowercase letters and digits');

export const exportStatusSchema = z.enum(['running', 'ready', 'failed']);
export type ExportStatus = z.infer<typeof exportStatusSchema>;

/** The record of one archive (partition userId, id = exportId). */
export const exportRecordSchema = z.object({
  id: exportIdSchema,
  kind: z.literal('account-export'),
  userId: z.string(),
  status: exportStatusSchema,
  createdAt: z.iso.datetime(),
  /** When the archive and its record go: the record's `ttl` is set to match. */
  expiresAt: z.iso.datetime(),
  readyAt: z.iso.datetime().optional(),
  /** The archive's size once written. */
  bytes: z.number().int().nonnegative().optional(),
  /** What the archive holds, counted. */
  contents: z
    .object({
      conversations: z.number().int(),
      memoryLines: z.number().int(),
      documents: z.number().int(),
      attachments: z.number().int(),
    })
    .optional(),
  error: z.string().optional(),
  ttl: z.number().int().positive(),
});
export type ExportRecord = z.infer<typeof exportRecordSchema>;

export const ACCOUNT_EXPORT_ORCHESTRATION = 'accountExport';
export const ACCOUNT_EXPORT_ACTIVITIES = {
  write: 'writeAccountExport',
  fail: 'failAccountExport',
  expire: 'expireAccountExport',
} as const;

/** The orchestration's and its activities' input: ids only. */
export const exportJobInputSchema = z.object({
  userId: z.string(),
  exportId: exportIdSchema,
  expiresAt: z.iso.datetime(),
});
export type ExportJobInput = z.infer<typeof exportJobInputSchema>;

export const exportFailureInputSchema = exportJobInputSchema.extend({ reason: z.string() });

/** The job's instance id: one per archive, so starting it again is refused rather than run twice. */
export function exportInstanceId(exportId: string): string {
  return `account-export-${exportId}`;
}

/** What GET .../export/{exportId} answers. */
export const exportViewSchema = z.object({
  exportId: exportIdSchema,
  status: exportStatusSchema,
  createdAt: z.iso.datetime(),
  expiresAt: z.iso.datetime(),
  bytes: z.number().int().optional(),
  contents: exportRecordSchema.shape.contents,
  error: z.string().optional(),
  /** Once ready: where to download the archive (a gzip'd tar), and until when that link works. */
  download: z.object({ url: z.string(), expiresAt: z.iso.datetime() }).optional(),
});
export type ExportView = z.infer<typeof exportViewSchema>;
