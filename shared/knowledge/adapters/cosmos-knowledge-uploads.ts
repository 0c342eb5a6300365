// The Cosmos DB adapter of KnowledgeUploads (container `knowledge-uploads`, partition documentId, a week's TTL): a
// document's bytes as base64 parts of UPLOAD_PART_BYTES (Cosmos DB holds at most 2 MB per item), each its own item
// with an id of its document, attempt and number, written by upsert and read by point reads, a few in flight at once.
import type { Container } from '@azure/cosmos';
import { mapBounded } from '../../bounded-parallel.js';
import { cosmosFailure, deleteItem, readItem } from '../../cosmos/adapters/cosmos-items.js';
import { UPLOAD_PART_BYTES, uploadPartId, uploadPartSchema, type UploadPart } from '../contracts.js';
import type { KnowledgeUploads } from '../knowledge-uploads.js';

/**
 * Parts in flight at once: a 10 MiB document is 10 parts of 1.33 MB of base64; four at a time keep the upload
 * quick without holding every part's request body in memory at once.
 */
const PARALLEL_PARTS = 4;
const what = 'an uploaded document part';

export function createCosmosKnowledgeUploads(container: Container): KnowledgeUploads {
  return {
    async put(documentId, attempt, content) {
      const parts = partCount(content.byteLength);
      const numbers = Array.from({ length: parts }, (_, part) => part);
      await mapBounded(numbers, PARALLEL_PARTS, async (part) => {
        const start = part * UPLOAD_PART_BYTES;
        const item: UploadPart = {
          id: uploadPartId(documentId, attempt, part),
          kind: 'knowledge-upload',
          documentId,
          attempt,
          part,
          content: Buffer.from(
            content.buffer,
            content.byteOffset + start,
            Math.min(UPLOAD_PART_BYTES, content.byteLength - start),
          ).toString('base64'),
        };
        try {
          // Upsert: the same content's parts are the same items, so a repeated upload changes nothing.
          await container.items.upsert(item);
        } catch (error) {
          throw cosmosFailure('storing an uploaded document part', error);
        }
      });
      return parts;
    },

    async get(documentId, attempt, parts) {
      const numbers = Array.from({ length: parts }, (_, part) => part);
      const read = await mapBounded(numbers, PARALLEL_PARTS, (part) =>
        readItem(container, uploadPartId(documentId, attempt, part), documentId, what, uploadPartSchema),
      );
      const buffers: Buffer[] = [];
      for (const [part, item] of read.entries()) {
        // A part gone (expired, or removed by a worker that finished) leaves the content incomplete: none of it.
        if (
          item === undefined ||
          item.resource.documentId !== documentId ||
          item.resource.attempt !== attempt ||
          item.resource.part !== part
        )
          return undefined;
        buffers.push(Buffer.from(item.resource.content, 'base64'));
      }
      return new Uint8Array(Buffer.concat(buffers));
    },

    async remove(documentId, attempt, parts) {
      const numbers = Array.from({ length: parts }, (_, part) => part);
      // deleteItem ignores a part already gone (404).
      await mapBounded(numbers, PARALLEL_PARTS, (part) =>
        deleteItem(container, uploadPartId(documentId, attempt, part), documentId, what),
      );
    },
  };
}

/** How many parts hold `bytes` bytes (none for nothing). */
function partCount(bytes: number): number {
  return Math.ceil(bytes / UPLOAD_PART_BYTES);
}
