// A file on its way in, by whichever way it came: its size, its type sniffed from the bytes, an image's pixels read
// from its header before anything decodes it, then re-encoded (scaled, metadata gone), the user's quota, then
// stored whole. Each refusal names its rule, and comes before anything is stored.
import { createHash, randomBytes } from 'node:crypto';
import { QuotaExceededError } from '../errors.js';
import type { Caller } from '../identity/caller.js';
import { isImageAttachment } from '../message-attachments.js';
import { isExempt } from '../quota/quota-gate.js';
import type { QuotaState } from '../quota/quota-state.js';
import type { QuotaConfig } from '../quota/settings.js';
import type { AttachmentStore, StoredAttachment } from './attachment-store.js';
import type { IncomingFile } from './contracts.js';
import { AttachmentRefusedError } from './errors.js';
import type { AttachmentConfig } from './settings.js';
import { sniffType } from './sniff.js';

/** Decodes and writes an image anew; throws on bytes it cannot read. */
export interface ImageEncoder {
  reencode(
    bytes: Uint8Array,
    options: { mediaType: string; maxEdge: number; maxPixels: number },
  ): Promise<{ bytes: Uint8Array; mediaType: string; width: number; height: number }>;
}

export interface AttachmentServices {
  store: AttachmentStore;
  images: ImageEncoder;
  config: AttachmentConfig;
  quota: QuotaConfig;
  /**
   * The leases every instance shares: an upload reserves its bytes there before it is stored, so two at once cannot
   * both pass QUOTA_ATTACHMENT_BYTES. Without it the check reads what is stored only.
   */
  leases?: Pick<QuotaState, 'takeTurnSlot' | 'releaseTurnSlot'>;
}

export function newAttachmentId(): string {
  return `att-${randomBytes(16).toString('hex')}`;
}

/** A file as stored, and whether it was kept already (the same bytes sent again reuse it, counted once). */
export interface StoredFile extends StoredAttachment {
  reused: boolean;
}

export async function storeAttachment(
  services: AttachmentServices,
  caller: Pick<Caller, 'userId' | 'groups'>,
  file: IncomingFile,
  options: {
    /** The id to store it under (a direct upload's); a new one otherwise. */
    id?: string;
    /** The conversation it is sent in, when known: a file already tied to it may be reused. */
    sessionId?: string;
  } = {},
): Promise<StoredFile> {
  const sourceSha256 = sha256(file.bytes);
  const kept = await services.store.findSent(caller.userId, sourceSha256, options.sessionId);
  if (kept !== undefined) return { ...kept, reused: true };
  const prepared = await prepareAttachment(services, file);
  const id = options.id ?? newAttachmentId();
  const release = await reserveQuota(services, caller, id, prepared.bytes.length);
  const attachment: StoredAttachment = {
    id,
    name: file.name,
    mediaType: prepared.mediaType,
    size: prepared.bytes.length,
    sha256: sha256(prepared.bytes),
    sourceSha256,
    ...(prepared.width === undefined ? {} : { width: prepared.width, height: prepared.height }),
  };
  try {
    await services.store.put(caller.userId, attachment, prepared.bytes);
  } finally {
    // Stored, its bytes are counted by the store; refused, they were never kept.
    await release();
  }
  return { ...attachment, reused: false };
}

const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');

/** The bytes to store and their type, or the rule the file breaks. */
export async function prepareAttachment(
  services: Pick<AttachmentServices, 'images' | 'config'>,
  file: IncomingFile,
): Promise<{ bytes: Uint8Array; mediaType: string; width?: number; height?: number }> {
  const { config } = services;
  if (services.config.blob === undefined)
    throw new AttachmentRefusedError(
      'attachments_off',
      'Attachments are off: ATTACHMENTS_BLOB_ENDPOINT names no Blob Storage account.',
    );
  if (file.bytes.length > config.maxFileBytes)
    throw new AttachmentRefusedError(
      'attachment_too_large',
      `'${file.name}' is ${file.bytes.length} bytes: a file may have at most ${config.maxFileBytes} (ATTACHMENTS_MAX_FILE_BYTES).`,
    );
  if (file.bytes.length === 0)
    throw new AttachmentRefusedError('attachment_unreadable', `'${file.name}' is empty.`);
  const sniffed = sniffType(file.bytes, file.declaredType);
  if (!config.types.includes(sniffed.mediaType))
    throw new AttachmentRefusedError(
      'attachment_type',
      `'${file.name}' holds ${sniffed.mediaType} (read from its bytes, whatever its name says), which is not among ` +
        `the types a message takes (ATTACHMENTS_TYPES: ${config.types.join(', ')}).`,
    );
  if (!isImageAttachment(sniffed)) return { bytes: file.bytes, mediaType: sniffed.mediaType };
  const { width, height } = sniffed;
  if (width === undefined || height === undefined || width === 0 || height === 0)
    throw new AttachmentRefusedError(
      'attachment_unreadable',
      `'${file.name}' is not a readable ${sniffed.mediaType}: its header gives no size.`,
    );
  if (width * height > config.maxPixels)
    throw new AttachmentRefusedError(
      'attachment_pixels',
      `'${file.name}' is ${width} × ${height} pixels: an image may have at most ${config.maxPixels} (ATTACHMENTS_MAX_PIXELS).`,
    );
  try {
    return await services.images.reencode(file.bytes, {
      mediaType: sniffed.mediaType,
      maxEdge: config.maxImageEdge,
      maxPixels: config.maxPixels,
    });
  } catch (error) {
    throw new AttachmentRefusedError(
      'attachment_unreadable',
      `'${file.name}' could not be read as ${sniffed.mediaType}: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
}

const LEASE_PREFIX = 'attachment:';

/**
 * QUOTA_ATTACHMENT_BYTES: what the user keeps, the uploads under way and this file. One write of the user's lease
 * document reserves the file's bytes (as knowledge uploads do), so a parallel upload counts them; the reservation is
 * dropped once the file is stored. Gives the release.
 */
async function reserveQuota(
  services: AttachmentServices,
  caller: Pick<Caller, 'userId' | 'groups'>,
  attachmentId: string,
  bytes: number,
): Promise<() => Promise<void>> {
  const allowed = services.config.quotaBytes;
  const nothing = () => Promise.resolve();
  if (allowed === 0 || isExempt(services.quota, caller)) return nothing;
  const check = async (reserved: number) => {
    const used = (await services.store.usedBytes(caller.userId)) + reserved;
    if (used + bytes > allowed)
      throw new QuotaExceededError(
        `This file would take your attachments to ${used + bytes} bytes (uploads under way included): you may keep ${allowed} (QUOTA_ATTACHMENT_BYTES). Delete conversations with files to make room.`,
        'attachmentBytes',
        allowed,
        used,
        3600,
      );
  };
  const { leases } = services;
  if (leases === undefined) {
    await check(0);
    return nothing;
  }
  const turn = `${LEASE_PREFIX}${attachmentId}`;
  await leases.takeTurnSlot({
    userId: caller.userId,
    turn,
    max: 0,
    leaseSeconds: services.quota.leaseSeconds,
    now: new Date(),
    reserve: { tokens: 0, costUsd: 0, bytes },
    check: (_open, held) =>
      check(
        held
          .filter((lease) => lease.turn.startsWith(LEASE_PREFIX))
          .reduce((sum, lease) => sum + lease.bytes, 0),
      ),
  });
  return () => leases.releaseTurnSlot(caller.userId, turn);
}
