// Direct uploads: a large file goes from the client straight to Blob Storage through a write-only URL for its one
// blob, then /complete runs the checks every way in runs (type from the bytes, re-encoding, size, quota) before the
// file can be attached; a refused upload is deleted. The sweep deletes what was never completed or attached.
import { NotFoundError, QuotaExceededError } from '../errors.js';
import type { Caller } from '../identity/caller.js';
import { isExempt } from '../quota/quota-gate.js';
import type { AttachmentUploads } from './attachment-uploads.js';
import { AttachmentRefusedError } from './errors.js';
import {
  newAttachmentId,
  storeAttachment,
  type AttachmentServices,
  type StoredFile,
} from './store-attachment.js';

export interface DirectUploadServices extends AttachmentServices {
  uploads: AttachmentUploads;
}

export interface UploadRequest {
  filename: string;
  mediaType?: string | undefined;
  size: number;
}

/** A write-only URL for one new blob, valid ATTACHMENTS_UPLOAD_MINUTES; the announced size is checked at once. */
export async function startUpload(
  services: DirectUploadServices,
  caller: Pick<Caller, 'userId' | 'groups'>,
  request: UploadRequest,
  now = new Date(),
): Promise<{ attachmentId: string; uploadUrl: string; expiresOn: Date }> {
  const { config } = services;
  if (config.blob === undefined)
    throw new AttachmentRefusedError(
      'attachments_off',
      'Attachments are off: ATTACHMENTS_BLOB_ENDPOINT names no Blob Storage account.',
    );
  if (request.size > config.maxFileBytes)
    throw new AttachmentRefusedError(
      'attachment_too_large',
      `'${request.filename}' is ${request.size} bytes: a file may have at most ${config.maxFileBytes} (ATTACHMENTS_MAX_FILE_BYTES).`,
    );
  await checkQuota(services, caller, request.size);
  const attachmentId = newAttachmentId();
  const expiresOn = new Date(now.getTime() + config.uploadMinutes * 60_000);
  const uploadUrl = await services.uploads.open(caller.userId, {
    attachmentId,
    name: request.filename,
    declaredType: request.mediaType,
    size: request.size,
    expiresOn,
  });
  return { attachmentId, uploadUrl, expiresOn };
}

/**
 * Checks the uploaded bytes as any file is checked and stores them as the attachment; the pending blob goes either
 * way. Completing again gives the stored attachment. The same bytes already kept give that file instead (its id).
 */
export async function completeUpload(
  services: DirectUploadServices,
  caller: Pick<Caller, 'userId' | 'groups'>,
  attachmentId: string,
): Promise<StoredFile> {
  const pending = await services.uploads.find(caller.userId, attachmentId);
  if (pending === undefined) {
    const stored = await services.store.find(caller.userId, attachmentId);
    if (stored !== undefined) return { ...stored, reused: true };
    throw new NotFoundError(`No upload '${attachmentId}' for this user.`);
  }
  const { ticket, uploadedBytes } = pending;
  if (uploadedBytes === undefined)
    throw new AttachmentRefusedError(
      'upload_incomplete',
      `Nothing was uploaded for '${ticket.name}' yet: PUT the file to its uploadUrl (x-ms-blob-type: BlockBlob), then complete it.`,
    );
  try {
    // Refused before it is read: the URL cannot bound what a client writes.
    if (uploadedBytes > services.config.maxFileBytes)
      throw new AttachmentRefusedError(
        'attachment_too_large',
        `'${ticket.name}' is ${uploadedBytes} bytes: a file may have at most ${services.config.maxFileBytes} (ATTACHMENTS_MAX_FILE_BYTES).`,
      );
    const bytes = await services.uploads.read(caller.userId, attachmentId);
    return await storeAttachment(
      services,
      caller,
      { name: ticket.name, declaredType: ticket.declaredType, bytes },
      { id: attachmentId },
    );
  } finally {
    await services.uploads.drop(caller.userId, attachmentId);
  }
}

/** Deletes uploads never completed (twice their URL's life after they began) and files never attached. */
export function sweepAttachments(
  services: Pick<DirectUploadServices, 'uploads' | 'config'>,
  now = new Date(),
): Promise<{ uploads: number; unattached: number }> {
  const { config } = services;
  return services.uploads.sweep({
    uploadsBefore: new Date(now.getTime() - 2 * config.uploadMinutes * 60_000),
    unattachedBefore: new Date(now.getTime() - config.unattachedHours * 3_600_000),
  });
}

/** The announced size against QUOTA_ATTACHMENT_BYTES, so a client learns early; /complete reserves it for real. */
async function checkQuota(
  services: DirectUploadServices,
  caller: Pick<Caller, 'userId' | 'groups'>,
  bytes: number,
): Promise<void> {
  const allowed = services.config.quotaBytes;
  if (allowed === 0 || isExempt(services.quota, caller)) return;
  const used = await services.store.usedBytes(caller.userId);
  if (used + bytes > allowed)
    throw new QuotaExceededError(
      `This file would take your attachments to ${used + bytes} bytes: you may keep ${allowed} (QUOTA_ATTACHMENT_BYTES). Delete conversations with files to make room.`,
      'attachmentBytes',
      allowed,
      used,
      3600,
    );
}
