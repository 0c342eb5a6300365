// Data archives in Blob Storage, beside attachments in the same container but under `exports/{user}/`, so they
// count in no attachment quota; the same code talks to Azurite locally.
import { Readable } from 'node:stream';
import {
  BlobSASPermissions,
  generateBlobSASQueryParameters,
  RestError,
  SASProtocol,
  type BlobServiceClient,
  type UserDelegationKey,
} from '@azure/storage-blob';
import { userPrefix } from '../../attachments/adapters/blob-attachment-store.js';
import { SAS_VERSION } from '../../attachments/adapters/blob-attachment-uploads.js';
import type { ArchiveStore } from '../archive-store.js';

const ARCHIVES = 'exports/';
const UPLOAD_BLOCK_BYTES = 4 * 1024 * 1024;
/** A user delegation key is asked for with a little slack on its start, for clocks that differ. */
const CLOCK_SKEW_MS = 5 * 60 * 1000;

export function createBlobArchiveStore(
  service: BlobServiceClient,
  containerName: string,
  now: () => Date = () => new Date(),
): ArchiveStore {
  const container = service.getContainerClient(containerName);
  let created: Promise<unknown> | undefined;
  const ensureContainer = () =>
    (created ??= container.createIfNotExists().catch((error: unknown) => {
      created = undefined;
      throw error;
    }));
  const name = (userId: string, exportId: string) => `${ARCHIVES}${userPrefix(userId)}${exportId}.tar.gz`;

  return {
    async write(userId, exportId, content) {
      await ensureContainer();
      const blob = container.getBlockBlobClient(name(userId, exportId));
      // Blocks are committed only at the end: a job that dies midway leaves no half archive to download.
      await blob.uploadStream(content, UPLOAD_BLOCK_BYTES, 2, {
        blobHTTPHeaders: {
          blobContentType: 'application/gzip',
          blobContentDisposition: `attachment; filename="my-data-${exportId}.tar.gz"`,
        },
      });
      return (await blob.getProperties()).contentLength ?? 0;
    },
    async open(userId, exportId) {
      try {
        const download = await container.getBlobClient(name(userId, exportId)).download();
        const body = download.readableStreamBody;
        if (body === undefined) return undefined;
        return {
          body: Readable.toWeb(body as Readable) as ReadableStream<Uint8Array>,
          bytes: download.contentLength ?? 0,
        };
      } catch (error) {
        if (isNotFound(error)) return undefined;
        throw error;
      }
    },
    async signedUrl(userId, exportId, expiresOn) {
      const blob = container.getBlobClient(name(userId, exportId));
      const startsOn = new Date(now().getTime() - CLOCK_SKEW_MS);
      const key = await service.getUserDelegationKey(startsOn, expiresOn);
      return signedBlobUrl(blob.url, container.containerName, blob.name, key, container.accountName, {
        startsOn,
        expiresOn,
      });
    },
    async delete(userId, exportId) {
      await container.deleteBlob(name(userId, exportId)).catch(ignoreNotFound);
    },
    async deleteUser(userId) {
      await ensureContainer();
      let deleted = 0;
      for await (const item of container.listBlobsFlat({ prefix: `${ARCHIVES}${userPrefix(userId)}` })) {
        await container.deleteBlob(item.name).catch(ignoreNotFound);
        deleted++;
      }
      return deleted;
    },
  };
}

/** A read-only HTTPS URL to one blob, signed with a user delegation key (no account key involved). */
export function signedBlobUrl(
  blobUrl: string,
  containerName: string,
  blobName: string,
  key: UserDelegationKey,
  accountName: string,
  window: { startsOn: Date; expiresOn: Date },
): string {
  const sas = generateBlobSASQueryParameters(
    {
      containerName,
      blobName,
      permissions: BlobSASPermissions.parse('r'),
      startsOn: window.startsOn,
      expiresOn: window.expiresOn,
      protocol: SASProtocol.Https,
      version: SAS_VERSION,
    },
    key,
    accountName,
  );
  return `${blobUrl}?${sas.toString()}`;
}

function isNotFound(error: unknown): boolean {
  return error instanceof RestError && error.statusCode === 404;
}

function ignoreNotFound(error: unknown): void {
  if (!isNotFound(error)) throw error;
}
