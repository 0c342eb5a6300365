import { randomBytes } from 'node:crypto';
import { gunzipSync } from 'node:zlib';
import type { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { MemoryAttachments } from '../../test/support/in-memory-attachments.js';
import { writeExport, exportStatus, type ExportJobServices } from './account-export.js';
import type { ArchiveSources } from './archive-contents.js';
import type { ArchiveStore } from './archive-store.js';
import type { ExportRecord } from './contracts.js';
import type { ExportRecords } from './export-records.js';

class Records implements ExportRecords {
  readonly items = new Map<string, ExportRecord>();
  put(record: ExportRecord) {
    this.items.set(record.id, record);
    return Promise.resolve();
  }
  update(record: ExportRecord) {
    if (!this.items.has(record.id)) return Promise.resolve(false);
    this.items.set(record.id, record);
    return Promise.resolve(true);
  }
  find(userId: string, exportId: string) {
    const record = this.items.get(exportId);
    return Promise.resolve(record?.userId === userId ? record : undefined);
  }
  list(userId: string) {
    return Promise.resolve([...this.items.values()].filter((record) => record.userId === userId));
  }
}

/** Keeps an archive only once its whole stream was read, as a block blob commits only at the end. */
class Archives implements ArchiveStore {
  readonly committed = new Map<string, Buffer>();
  writes = 0;
  crashAfterBytes: number | undefined;
  async write(userId: string, exportId: string, content: Readable) {
    this.writes++;
    const chunks: Buffer[] = [];
    let read = 0;
    for await (const chunk of content as AsyncIterable<Buffer>) {
      chunks.push(chunk);
      read += chunk.length;
      if (this.crashAfterBytes !== undefined && read >= this.crashAfterBytes) {
        this.crashAfterBytes = undefined;
        throw new Error('the worker died midway');
      }
    }
    const bytes = Buffer.concat(chunks);
    this.committed.set(`${userId}/${exportId}`, bytes);
    return bytes.length;
  }
  open() {
    return Promise.resolve(undefined);
  }
  signedUrl(userId: string, exportId: string, expiresOn: Date) {
    return Promise.resolve(`https://blob/${userId}/${exportId}?se=${expiresOn.toISOString()}`);
  }
  delete(userId: string, exportId: string) {
    this.committed.delete(`${userId}/${exportId}`);
    return Promise.resolve();
  }
  deleteUser() {
    return Promise.resolve(0);
  }
}

const USER = 'user_001';
const NOW = new Date('2026-03-01T10:00:00Z');

async function setUp() {
  const attachments = new MemoryAttachments();
  const big = randomBytes(300_000);
  await attachments.put(
    USER,
    { id: 'att-1', name: 'big.bin', mediaType: 'application/octet-stream', size: big.length, sha256: '' },
    big,
  );
  const sources = {
    history: { headers: { list: () => Promise.resolve({ headers: [] }) } },
    memory: {
      facts: { list: () => Promise.resolve([]) },
      summaries: { list: () => Promise.resolve({ summaries: [] }) },
    },
    knowledge: {
      documents: { list: () => Promise.resolve({ documents: [] }) },
      text: { read: () => Promise.resolve('') },
    },
    attachments,
  } as unknown as ArchiveSources;
  const records = new Records();
  const archives = new Archives();
  const services: ExportJobServices = {
    records,
    archives,
    sources,
    settings: { ttlHours: 24, link: 'app' },
    now: () => NOW,
  };
  const record: ExportRecord = {
    id: 'abcdef0123456789',
    kind: 'account-export',
    userId: USER,
    status: 'running',
    createdAt: NOW.toISOString(),
    expiresAt: new Date(NOW.getTime() + 3_600_000).toISOString(),
    ttl: 3600,
  };
  await records.put(record);
  const input = { userId: USER, exportId: record.id, expiresAt: record.expiresAt };
  return { services, records, archives, input, big };
}

describe('writeExport', () => {
  it('after a crash midway, runs again and leaves one whole archive; a redelivery writes nothing', async () => {
    const { services, records, archives, input, big } = await setUp();
    archives.crashAfterBytes = 1;
    await expect(writeExport(services, input)).rejects.toThrow('midway');
    expect(archives.committed.size).toBe(0);
    expect(records.items.get(input.exportId)?.status).toBe('running');

    expect(await writeExport(services, input)).toEqual({
      conversations: 0,
      memoryLines: 0,
      documents: 0,
      attachments: 1,
    });
    expect(archives.committed.size).toBe(1);
    const tar = gunzipSync(archives.committed.get(`${USER}/${input.exportId}`) ?? Buffer.alloc(0));
    expect(tar.includes(big)).toBe(true);
    const ready = records.items.get(input.exportId);
    expect(ready).toMatchObject({ status: 'ready', contents: { attachments: 1 } });
    // Its ttl counts from this write: it still ends when the archive does.
    expect(ready?.ttl).toBe(3600);

    await writeExport(services, input);
    expect(archives.writes).toBe(2);
  });

  it('writes nothing for an erased user, and deletes what an erase raced with', async () => {
    const { services, records, archives, input } = await setUp();
    records.items.clear();
    expect(await writeExport(services, input)).toBeUndefined();
    expect(archives.writes).toBe(0);

    const raced = await setUp();
    const write = raced.archives.write.bind(raced.archives);
    raced.archives.write = async (userId, exportId, content) => {
      const bytes = await write(userId, exportId, content);
      raced.records.items.clear(); // the erase ran while the archive was written
      return bytes;
    };
    expect(await writeExport(raced.services, raced.input)).toBeUndefined();
    expect(raced.archives.committed.size).toBe(0);
  });

  it("answers another user's id as unknown, and a ready archive with its link", async () => {
    const { services, input } = await setUp();
    await expect(exportStatus(services, 'user_002', input.exportId)).rejects.toThrow(/No data archive/);
    await writeExport(services, input);
    const app = await exportStatus(services, USER, input.exportId);
    expect(app.download).toEqual({
      url: `/api/account/users/${USER}/export/${input.exportId}/archive`,
      expiresAt: input.expiresAt,
    });
    const sas = await exportStatus(
      { ...services, settings: { ttlHours: 24, link: 'sas' } },
      USER,
      input.exportId,
    );
    // Fifteen minutes, within the archive's own hour.
    expect(sas.download?.expiresAt).toBe('2026-03-01T10:15:00.000Z');
  });
});
