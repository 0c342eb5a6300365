// Attachments in Azure Blob Storage: one block blob per file at `{user}/{attachmentId}` (`{user}` a hash of the user
// id), what a message keeps of it in the blob's metadata, and what is made from it (`{attachmentId}.{what}`) beside.
import { createHash } from 'node:crypto';
import type { TokenCredential } from '@azure/identity';
import type { Agent } from 'node:https';
import { BlobServiceClient, RestError, newPipeline, type ContainerClient } from '@azure/storage-blob';
import type { AttachmentStore, StoredAttachment } from '../attachment-store.js';

export interface BlobAttachmentOptions {
  endpoint: string;
  container: string;
  /** An account key (an emulator of the user's own); in Azure and locally a token credential signs in. */
  connectionString?: string | undefined;
}

/** The service and container clients, with the key locally and the app's identity in Azure. */
export function createAttachmentBlobClients(
  options: BlobAttachmentOptions,
  credential: TokenCredential,
  agent?: Agent,
): { service: BlobServiceClient; container: ContainerClient } {
  const service = createBlobService(options, credential, agent);
  return { service, container: service.getContainerClient(options.container) };
}

/** The Blob service client (a user delegation key is asked of it); `agent` trusts the local emulator's certificate. */
export function createBlobService(
  options: BlobAttachmentOptions,
  credential: TokenCredential,
  agent?: Agent,
): BlobServiceClient {
  if (options.connectionString !== undefined)
    return BlobServiceClient.fromConnectionString(options.connectionString);
  return agent === undefined
    ? new BlobServiceClient(options.endpoint, credential)
    : new BlobServiceClient(options.endpoint, trustingPipeline(credential, agent));
}

/** Every request through `agent`: the local emulator's certificate is trusted by it alone (the SDK takes no CA). */
function trustingPipeline(credential: TokenCredential, agent: Agent) {
  const pipeline = newPipeline(credential);
  pipeline.factories.push({
    create: (next) => ({
      sendRequest(request) {
        request.agent = agent;
        return next.sendRequest(request);
      },
    }),
  });
  return pipeline;
}

/** The user's folder: a hash, so a user id never shapes a blob name. */
export function userPrefix(userId: string): string {
  return `${createHash('sha256').update(userId, 'utf8').digest('hex').slice(0, 32)}/`;
}

/** A blob made from the user's file (its passages' embeddings), named beside it: it goes when the file goes. */
export function derivedBlobName(userId: string, attachmentId: string, suffix: string): string {
  return `${userPrefix(userId)}${attachmentId}.${suffix}`;
}

/** The file a blob under the user's prefix was made from (itself, for a file); an attachment id holds no dot. */
function fileIdOf(name: string, prefix: string): { id: string; derived: boolean } {
  const rest = name.slice(prefix.length);
  const dot = rest.indexOf('.');
  return dot < 0 ? { id: rest, derived: false } : { id: rest.slice(0, dot), derived: true };
}

export function createBlobAttachmentStore(container: ContainerClient): AttachmentStore {
  let created: Promise<unknown> | undefined;
  // The container is made once per process, on the first write (infra makes it in Azure; Azurite starts empty).
  const ensureContainer = () =>
    (created ??= container.createIfNotExists().catch((error: unknown) => {
      created = undefined;
      throw error;
    }));
  const blob = (userId: string, id: string) => container.getBlockBlobClient(`${userPrefix(userId)}${id}`);

  async function* userBlobs(userId: string) {
    await ensureContainer();
    yield* container.listBlobsFlat({ prefix: userPrefix(userId), includeMetadata: true });
  }

  /** The user's files, without what was made from them. */
  async function* fileBlobs(userId: string) {
    for await (const item of userBlobs(userId))
      if (!fileIdOf(item.name, userPrefix(userId)).derived) yield item;
  }

  /** Deletes what was made from the user's file. */
  async function deleteDerived(userId: string, attachmentId: string) {
    for await (const item of container.listBlobsFlat({ prefix: derivedBlobName(userId, attachmentId, '') }))
      await container.deleteBlob(item.name, { deleteSnapshots: 'include' }).catch(ignoreNotFound);
  }

  return {
    async put(userId, attachment, bytes) {
      await ensureContainer();
      await blob(userId, attachment.id).uploadData(bytes, {
        blobHTTPHeaders: { blobContentType: attachment.mediaType },
        metadata: toMetadata(attachment),
        // A new id each time: an existing blob is never overwritten.
        conditions: { ifNoneMatch: '*' },
      });
    },
    async find(userId, attachmentId) {
      try {
        const properties = await blob(userId, attachmentId).getProperties();
        return fromMetadata(attachmentId, properties.metadata ?? {}, properties.contentLength ?? 0);
      } catch (error) {
        if (isNotFound(error)) return undefined;
        throw error;
      }
    },
    async read(userId, attachmentId) {
      try {
        const client = blob(userId, attachmentId);
        const properties = await client.getProperties();
        const attachment = fromMetadata(
          attachmentId,
          properties.metadata ?? {},
          properties.contentLength ?? 0,
        );
        return { attachment, bytes: await client.downloadToBuffer() };
      } catch (error) {
        if (isNotFound(error)) return undefined;
        throw error;
      }
    },
    async findSent(userId, sourceSha256, sessionId) {
      for await (const item of fileBlobs(userId)) {
        const metadata = item.metadata ?? {};
        if (metadata.sourcesha256 !== sourceSha256) continue;
        if (metadata.sessionid !== undefined && metadata.sessionid !== sessionId) continue;
        const id = item.name.slice(userPrefix(userId).length);
        return fromMetadata(id, metadata, item.properties.contentLength ?? 0);
      }
      return undefined;
    },
    async link(userId, attachmentIds, sessionId) {
      await Promise.all(
        attachmentIds.map(async (id) => {
          const client = blob(userId, id);
          const properties = await client.getProperties();
          const metadata = { ...(properties.metadata ?? {}), sessionid: sessionId };
          await client.setMetadata(metadata, { conditions: { ifMatch: properties.etag ?? '*' } });
        }),
      );
    },
    async list(userId) {
      const found: StoredAttachment[] = [];
      for await (const item of fileBlobs(userId)) {
        const id = item.name.slice(userPrefix(userId).length);
        found.push(fromMetadata(id, item.metadata ?? {}, item.properties.contentLength ?? 0));
      }
      return found;
    },
    async usedBytes(userId) {
      let total = 0;
      for await (const item of fileBlobs(userId)) total += item.properties.contentLength ?? 0;
      return total;
    },
    async delete(userId, attachmentIds) {
      await Promise.all(
        attachmentIds.map(async (id) => {
          await blob(userId, id).delete({ deleteSnapshots: 'include' }).catch(ignoreNotFound);
          await deleteDerived(userId, id);
        }),
      );
    },
    async deleteConversation(userId, sessionId) {
      const files = new Set<string>();
      const derived: { name: string; id: string; sessionId: string | undefined }[] = [];
      for await (const item of userBlobs(userId)) {
        const of = fileIdOf(item.name, userPrefix(userId));
        if (of.derived) derived.push({ name: item.name, id: of.id, sessionId: item.metadata?.sessionid });
        else if (item.metadata?.sessionid === sessionId) files.add(item.name);
      }
      for (const name of files)
        await container.deleteBlob(name, { deleteSnapshots: 'include' }).catch(ignoreNotFound);
      // What was made from them: by the file it was made from, or by the conversation it names.
      for (const { name, id, sessionId: of } of derived)
        if (of === sessionId || files.has(`${userPrefix(userId)}${id}`))
          await container.deleteBlob(name, { deleteSnapshots: 'include' }).catch(ignoreNotFound);
      return files.size;
    },
    async deleteUser(userId) {
      let deleted = 0;
      // Every blob under the prefix: the files and what was made from them.
      for await (const item of userBlobs(userId)) {
        await container.deleteBlob(item.name, { deleteSnapshots: 'include' }).catch(ignoreNotFound);
        if (!fileIdOf(item.name, userPrefix(userId)).derived) deleted++;
      }
      // Direct uploads under way too (blob-attachment-uploads.ts keeps them under pending/, by the same prefix).
      for await (const item of container.listBlobsFlat({ prefix: `pending/${userPrefix(userId)}` }))
        await container.deleteBlob(item.name, { deleteSnapshots: 'include' }).catch(ignoreNotFound);
      return deleted;
    },
  };
}

/** Blob metadata is ASCII: the file's name is kept percent-encoded. */
function toMetadata(attachment: StoredAttachment): Record<string, string> {
  return {
    name: encodeURIComponent(attachment.name),
    mediatype: attachment.mediaType,
    sha256: attachment.sha256,
    ...(attachment.sourceSha256 === undefined ? {} : { sourcesha256: attachment.sourceSha256 }),
    ...(attachment.width === undefined ? {} : { width: String(attachment.width) }),
    ...(attachment.height === undefined ? {} : { height: String(attachment.height) }),
    ...(attachment.sessionId === undefined ? {} : { sessionid: attachment.sessionId }),
  };
}

function fromMetadata(id: string, metadata: Record<string, string>, size: number): StoredAttachment {
  const width = metadata.width === undefined ? undefined : Number(metadata.width);
  const height = metadata.height === undefined ? undefined : Number(metadata.height);
  return {
    id,
    name: decodeURIComponent(metadata.name ?? id),
    mediaType: metadata.mediatype ?? 'application/octet-stream',
    size,
    sha256: metadata.sha256 ?? '',
    ...(metadata.sourcesha256 === undefined ? {} : { sourceSha256: metadata.sourcesha256 }),
    ...(width === undefined ? {} : { width }),
    ...(height === undefined ? {} : { height }),
    ...(metadata.sessionid === undefined ? {} : { sessionId: metadata.sessionid }),
  };
}

export function isNotFound(error: unknown): boolean {
  return error instanceof RestError && error.statusCode === 404;
}

export function ignoreNotFound(error: unknown): void {
  if (!isNotFound(error)) throw error;
}
