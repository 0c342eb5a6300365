// Direct uploads in Blob Storage: the pending file at `pending/{user}/{id}`, written by the client through a user
// delegation SAS for that one blob (create and write, minutes long), and its ticket beside it in a small blob's
// metadata. The sweep walks the pending folder and the files no message carries.
import {
  BlobSASPermissions,
  generateBlobSASQueryParameters,
  SASProtocol,
  type BlobServiceClient,
  type ContainerClient,
  type UserDelegationKey,
} from '@azure/storage-blob';
import type { AttachmentUploads, UploadTicket } from '../attachment-uploads.js';
import { ignoreNotFound, isNotFound, userPrefix } from './blob-attachment-store.js';

const PENDING = 'pending/';
/** `{user}/{attachmentId}`, as blob-attachment-store.ts names a file. */
const ATTACHMENT_NAME = /^[0-9a-f]{32}\/att-[0-9a-f]{32}$/;
/**
 * The signed version of the URLs: one both Azure and the local emulator (Azurite 3.35) sign alike. The SDK's own
 * default (2026-04-06) adds fields to the string to sign that the emulator does not know yet.
 */
export const SAS_VERSION = '2025-07-05';
/** A delegation key is asked for a day and used while it has more than an hour left. */
const KEY_LIFETIME_MS = 24 * 3_600_000;
const KEY_MARGIN_MS = 3_600_000;

export function createBlobAttachmentUploads(
  service: BlobServiceClient,
  container: ContainerClient,
): AttachmentUploads {
  const pendingName = (userId: string, id: string) => `${PENDING}${userPrefix(userId)}${id}`;
  const ticketBlob = (userId: string, id: string) =>
    container.getBlockBlobClient(`${pendingName(userId, id)}.ticket`);
  let key: Promise<UserDelegationKey> | undefined;
  // One key signs every upload URL of this process until near its end (asking for one is a round trip).
  const delegationKey = async (now: Date, until: Date) => {
    const current = await key;
    if (current === undefined || current.signedExpiresOn.getTime() - KEY_MARGIN_MS < until.getTime()) {
      key = service.getUserDelegationKey(
        new Date(now.getTime() - 5 * 60_000),
        new Date(now.getTime() + KEY_LIFETIME_MS),
      );
      key.catch(() => (key = undefined));
    }
    return key as Promise<UserDelegationKey>;
  };
  let created: Promise<unknown> | undefined;
  const ensureContainer = () =>
    (created ??= container.createIfNotExists().catch((error: unknown) => {
      created = undefined;
      throw error;
    }));

  return {
    async open(userId, ticket) {
      await ensureContainer();
      await ticketBlob(userId, ticket.attachmentId).uploadData(Buffer.alloc(0), {
        metadata: toMetadata(ticket),
        conditions: { ifNoneMatch: '*' },
      });
      const now = new Date();
      const signing = await delegationKey(now, ticket.expiresOn);
      const blobName = pendingName(userId, ticket.attachmentId);
      const sas = generateBlobSASQueryParameters(
        {
          containerName: container.containerName,
          blobName,
          // Create and write this one blob: no read, no list, no delete, nothing else in the container.
          permissions: BlobSASPermissions.parse('cw'),
          startsOn: new Date(now.getTime() - 60_000),
          expiresOn: ticket.expiresOn,
          version: SAS_VERSION,
          protocol: container.url.startsWith('https:') ? SASProtocol.Https : SASProtocol.HttpsAndHttp,
        },
        signing,
        service.accountName,
      );
      return `${container.getBlockBlobClient(blobName).url}?${sas.toString()}`;
    },
    async find(userId, attachmentId) {
      let ticket: UploadTicket;
      try {
        const properties = await ticketBlob(userId, attachmentId).getProperties();
        ticket = fromMetadata(attachmentId, properties.metadata ?? {});
      } catch (error) {
        if (isNotFound(error)) return undefined;
        throw error;
      }
      try {
        const upload = await container.getBlockBlobClient(pendingName(userId, attachmentId)).getProperties();
        return { ticket, uploadedBytes: upload.contentLength ?? 0 };
      } catch (error) {
        if (isNotFound(error)) return { ticket, uploadedBytes: undefined };
        throw error;
      }
    },
    read: (userId, attachmentId) =>
      container.getBlockBlobClient(pendingName(userId, attachmentId)).downloadToBuffer(),
    async drop(userId, attachmentId) {
      await Promise.all([
        container.deleteBlob(pendingName(userId, attachmentId)).catch(ignoreNotFound),
        ticketBlob(userId, attachmentId).delete().catch(ignoreNotFound),
      ]);
    },
    async sweep({ uploadsBefore, unattachedBefore }) {
      await ensureContainer();
      let uploads = 0;
      let unattached = 0;
      for await (const item of container.listBlobsFlat({ includeMetadata: true })) {
        const createdOn = item.properties.createdOn ?? item.properties.lastModified;
        const pending = item.name.startsWith(PENDING);
        // Only attachments (under a user's prefix) and uploads: other things share the container (data archives).
        if (!pending && !ATTACHMENT_NAME.test(item.name)) continue;
        if (pending ? createdOn >= uploadsBefore : createdOn >= unattachedBefore) continue;
        if (!pending && item.metadata?.sessionid !== undefined) continue;
        await container.deleteBlob(item.name, { deleteSnapshots: 'include' }).catch(ignoreNotFound);
        if (!pending) unattached++;
        else if (item.name.endsWith('.ticket')) uploads++;
      }
      return { uploads, unattached };
    },
  };
}

function toMetadata(ticket: UploadTicket): Record<string, string> {
  return {
    name: encodeURIComponent(ticket.name),
    size: String(ticket.size),
    expireson: ticket.expiresOn.toISOString(),
    ...(ticket.declaredType === undefined ? {} : { declaredtype: ticket.declaredType }),
  };
}

function fromMetadata(attachmentId: string, metadata: Record<string, string>): UploadTicket {
  return {
    attachmentId,
    name: decodeURIComponent(metadata.name ?? attachmentId),
    size: Number(metadata.size ?? 0),
    expiresOn: new Date(metadata.expireson ?? 0),
    ...(metadata.declaredtype === undefined ? {} : { declaredType: metadata.declaredtype }),
  };
}
