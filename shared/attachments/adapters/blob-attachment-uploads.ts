// Direct uploads in Blob Storage: the pending file at `pending/{user}/{id}`, written by the client through a user
// delegation SAS for that one blob (create and write, minutes long), and its ticket beside it in a small blob's
// metadata. The sweep walks the pending folder, the files no message carries and what was made from a file now gone.
import type { ContainerClient } from '@azure/storage-blob';
import type { AttachmentUploads, UploadTicket } from '../attachment-uploads.js';
import { ignoreNotFound, isNotFound, userPrefix } from './blob-attachment-store.js';
import type { BlobSasSigner } from './blob-sas-signer.js';

const PENDING = 'pending/';
/** `{user}/{attachmentId}`, as blob-attachment-store.ts names a file. */
const ATTACHMENT_NAME = /^[0-9a-f]{32}\/att-[0-9a-f]{32}$/;
/** `{user}/{attachmentId}.{what}`: made from that file (its passages' embeddings), named beside it. */
const DERIVED_NAME = /^([0-9a-f]{32}\/att-[0-9a-f]{32})\./;
export function createBlobAttachmentUploads(
  signer: BlobSasSigner,
  container: ContainerClient,
): AttachmentUploads {
  const pendingName = (userId: string, id: string) => `${PENDING}${userPrefix(userId)}${id}`;
  const ticketBlob = (userId: string, id: string) =>
    container.getBlockBlobClient(`${pendingName(userId, id)}.ticket`);
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
      const blob = container.getBlockBlobClient(pendingName(userId, ticket.attachmentId));
      // Create and write this one blob: no read, no list, no delete, nothing else in the container.
      return signer.signedUrl(
        { url: blob.url, containerName: container.containerName, name: blob.name },
        { permissions: 'cw', expiresOn: ticket.expiresOn },
      );
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
      // Names are listed in order, so a file comes just before what was made from it.
      let keptFile: string | undefined;
      for await (const item of container.listBlobsFlat({ includeMetadata: true })) {
        const createdOn = item.properties.createdOn ?? item.properties.lastModified;
        const madeFrom = DERIVED_NAME.exec(item.name)?.[1];
        if (madeFrom !== undefined) {
          // Made from a file that is gone (deleted while a turn was still reading it): as old as an unattached file.
          if (madeFrom !== keptFile && createdOn < unattachedBefore)
            await container.deleteBlob(item.name, { deleteSnapshots: 'include' }).catch(ignoreNotFound);
          continue;
        }
        const pending = item.name.startsWith(PENDING);
        // Only attachments (under a user's prefix) and uploads: other things share the container (data archives).
        if (!pending && !ATTACHMENT_NAME.test(item.name)) continue;
        const young = pending ? createdOn >= uploadsBefore : createdOn >= unattachedBefore;
        if (young || (!pending && item.metadata?.sessionid !== undefined)) {
          if (!pending) keptFile = item.name;
          continue;
        }
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
