// Data archives in Blob Storage, beside attachments in the same container but under `exports/{user}/`, so they
// count in no attachment quota; the same code talks to Azurite locally.
import { Readable } from 'node:stream';
import { RestError, type ContainerClient } from '@azure/storage-blob';
import { userPrefix } from '../../attachments/adapters/blob-attachment-store.js';
import type { BlobSasSigner } from '../../attachments/adapters/blob-sas-signer.js';
import type { ArchiveStore } from '../archive-store.js';

const ARCHIVES = 'exports/';
const UPLOAD_BLOCK_BYTES = 4 * 1024 * 1024;

export function createBlobArchiveStore(signer: BlobSasSigner, container: ContainerClient): ArchiveStore {
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
      // Read this one archive, nothing else.
      return signer.signedUrl(
        { url: blob.url, containerName: container.containerName, name: blob.name },
        { permissions: 'r', expiresOn },
      );
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

function isNotFound(error: unknown): boolean {
  return error instanceof RestError && error.statusCode === 404;
}

function ignoreNotFound(error: unknown): void {
  if (!isNotFound(error)) throw error;
}
