// Contract tests of a file's kept passage embeddings against the local Blob Storage (Azurite) with the real SDK: kept
// once whoever writes first, left out of the user's files and bytes, and deleted with their file, its conversation,
// its user, or by the sweep once their file is gone.
import { randomBytes } from 'node:crypto';
import type { ContainerClient } from '@azure/storage-blob';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLocalBlob, type LocalBlob } from '../../local/blob/local-azurite.js';
import { createBlobAttachmentStore } from '../../shared/attachments/adapters/blob-attachment-store.js';
import { createBlobAttachmentUploads } from '../../shared/attachments/adapters/blob-attachment-uploads.js';
import {
  createBlobPassageVectors,
  decodeVectors,
  encodeVectors,
} from '../../shared/attachments/adapters/blob-passage-vectors.js';
import { createBlobSasSigner } from '../../shared/attachments/adapters/blob-sas-signer.js';
import type { AttachmentStore, StoredAttachment } from '../../shared/attachments/attachment-store.js';
import type { AttachmentUploads } from '../../shared/attachments/attachment-uploads.js';
import type { PassageVectorStore } from '../../shared/attachments/passage-vectors.js';

let blob: LocalBlob;
let container: ContainerClient;
let store: AttachmentStore;
let vectors: PassageVectorStore;
let uploads: AttachmentUploads;

beforeAll(async () => {
  blob = await startLocalBlob({ dataDir: undefined });
  const service = blob.serviceClient();
  container = service.getContainerClient('vectors');
  await container.createIfNotExists();
  store = createBlobAttachmentStore(container);
  vectors = createBlobPassageVectors(container);
  uploads = createBlobAttachmentUploads(createBlobSasSigner(service), container);
}, 60_000);

afterAll(() => blob?.stop());

const file = (sessionId?: string): StoredAttachment => ({
  id: `att-${randomBytes(16).toString('hex')}`,
  name: 'ledger.txt',
  mediaType: 'text/plain',
  size: 5,
  sha256: 'x',
  ...(sessionId === undefined ? {} : { sessionId }),
});

async function keptFile(userId: string, sessionId?: string): Promise<StoredAttachment> {
  const stored = file(sessionId);
  await store.put(userId, stored, Buffer.from('hello'));
  await vectors.write(userId, stored, 'k1', [
    [1, 0.5],
    [0.25, -2],
  ]);
  return stored;
}

async function names(): Promise<string[]> {
  const found: string[] = [];
  for await (const item of container.listBlobsFlat()) found.push(item.name);
  return found;
}

describe('passage embeddings kept beside their file', { timeout: 60_000 }, () => {
  it('reads back what was written first, exactly as float32; another key holds nothing', async () => {
    const stored = await keptFile('user_a');
    const read = await vectors.read('user_a', stored.id, 'k1');
    expect(read?.map((vector) => Array.from(vector))).toEqual([
      [1, 0.5],
      [0.25, -2],
    ]);
    // A racing round's write under the same key changes nothing.
    await vectors.write('user_a', stored, 'k1', [[9, 9]]);
    expect((await vectors.read('user_a', stored.id, 'k1'))?.length).toBe(2);
    expect(await vectors.read('user_a', stored.id, 'k2')).toBeUndefined();
    expect(await vectors.read('user_b', stored.id, 'k1')).toBeUndefined();
    expect(() => decodeVectors(encodeVectors([[1, 2]]).subarray(0, 10))).toThrow(/header/);
  });

  it("is none of the user's files: not listed, not counted in their bytes", async () => {
    const stored = await keptFile('user_c');
    expect((await store.list('user_c')).map((found) => found.id)).toEqual([stored.id]);
    expect(await store.usedBytes('user_c')).toBe(5);
  });

  it('goes with its file, its conversation and its user', async () => {
    const byId = await keptFile('user_d');
    const bySession = await keptFile('user_d', 's1');
    const other = await keptFile('user_d', 's2');
    await store.delete('user_d', [byId.id]);
    expect((await names()).some((name) => name.includes(byId.id))).toBe(false);

    expect(await store.deleteConversation('user_d', 's1')).toBe(1);
    const left = await names();
    expect(left.some((name) => name.includes(bySession.id))).toBe(false);
    expect(left.filter((name) => name.includes(other.id))).toHaveLength(2);

    expect(await store.deleteUser('user_d')).toBe(1);
    expect((await names()).some((name) => name.includes(other.id))).toBe(false);
  });

  it('is swept once old when its file is gone, and kept while its file is', async () => {
    const kept = await keptFile('user_e', 's1');
    const orphan = file('s1');
    await vectors.write('user_e', orphan, 'k1', [[1, 1]]);
    const later = new Date(Date.now() + 48 * 3_600_000);
    await uploads.sweep({ uploadsBefore: new Date(0), unattachedBefore: new Date(0) });
    expect((await names()).some((name) => name.includes(orphan.id))).toBe(true);
    await uploads.sweep({ uploadsBefore: later, unattachedBefore: later });
    const left = await names();
    expect(left.some((name) => name.includes(orphan.id))).toBe(false);
    expect(left.filter((name) => name.includes(kept.id))).toHaveLength(2);
  });
});
