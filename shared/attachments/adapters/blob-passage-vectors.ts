// A file's passage embeddings in Blob Storage, beside the file: `{user}/{attachmentId}.passages-{key}.f32`, the
// vectors' count and length (two little-endian uint32) then every number as a little-endian float32.
import { RestError, type ContainerClient } from '@azure/storage-blob';
import type { PassageVectorStore } from '../passage-vectors.js';
import { derivedBlobName, isNotFound } from './blob-attachment-store.js';

const HEADER_BYTES = 8;

export function createBlobPassageVectors(container: ContainerClient): PassageVectorStore {
  const blob = (userId: string, attachmentId: string, key: string) =>
    container.getBlockBlobClient(derivedBlobName(userId, attachmentId, `passages-${key}.f32`));
  return {
    async read(userId, attachmentId, key) {
      try {
        return decodeVectors(await blob(userId, attachmentId, key).downloadToBuffer());
      } catch (error) {
        if (isNotFound(error)) return undefined;
        throw error;
      }
    },
    async write(userId, attachment, key, vectors) {
      try {
        await blob(userId, attachment.id, key).uploadData(encodeVectors(vectors), {
          blobHTTPHeaders: { blobContentType: 'application/octet-stream' },
          // The file's conversation, so that deleting the conversation finds these with the file.
          ...(attachment.sessionId === undefined ? {} : { metadata: { sessionid: attachment.sessionId } }),
          // Kept once: the same key holds the same texts embedded by the same model, whoever wrote first.
          conditions: { ifNoneMatch: '*' },
        });
      } catch (error) {
        if (error instanceof RestError && (error.statusCode === 409 || error.statusCode === 412)) return;
        throw error;
      }
    },
  };
}

export function encodeVectors(vectors: readonly ArrayLike<number>[]): Buffer {
  const dimensions = vectors[0]?.length ?? 0;
  const bytes = Buffer.alloc(HEADER_BYTES + vectors.length * dimensions * 4);
  bytes.writeUInt32LE(vectors.length, 0);
  bytes.writeUInt32LE(dimensions, 4);
  let at = HEADER_BYTES;
  for (const vector of vectors) {
    if (vector.length !== dimensions)
      throw new Error('Passage embeddings of different lengths cannot be kept.');
    for (let i = 0; i < dimensions; i++, at += 4) bytes.writeFloatLE(vector[i] as number, at);
  }
  return bytes;
}

export function decodeVectors(bytes: Buffer): Float32Array[] {
  if (bytes.length < HEADER_BYTES) throw new Error('Kept passage embeddings are cut short.');
  const count = bytes.readUInt32LE(0);
  const dimensions = bytes.readUInt32LE(4);
  if (bytes.length !== HEADER_BYTES + count * dimensions * 4)
    throw new Error('Kept passage embeddings do not hold what their header says.');
  const vectors: Float32Array[] = [];
  let at = HEADER_BYTES;
  for (let n = 0; n < count; n++) {
    const vector = new Float32Array(dimensions);
    for (let i = 0; i < dimensions; i++, at += 4) vector[i] = bytes.readFloatLE(at);
    vectors.push(vector);
  }
  return vectors;
}
