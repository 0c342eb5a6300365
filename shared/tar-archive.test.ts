import { execFileSync } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterEach, describe, expect, it } from 'vitest';
import { tarBlocks, type ArchiveEntry } from './tar-archive.js';

async function* from(entries: ArchiveEntry[]): AsyncGenerator<ArchiveEntry> {
  for (const entry of entries) yield await Promise.resolve(entry);
}

async function archive(entries: ArchiveEntry[]): Promise<Buffer> {
  const blocks: Buffer[] = [];
  for await (const block of tarBlocks(from(entries))) blocks.push(block);
  return Buffer.concat(blocks);
}

describe('tarBlocks', () => {
  let dir: string | undefined;
  afterEach(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('writes an archive that tar lists and extracts byte for byte', async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'tar-'));
    const long = `${'deep/'.repeat(30)}file-é.txt`;
    const binary = Uint8Array.from({ length: 1500 }, (_, i) => (i * 7) % 256);
    const entries: ArchiveEntry[] = [
      { name: 'manifest.json', bytes: Buffer.from('{"a":1}\n'), modified: new Date('2026-01-02T03:04:05Z') },
      { name: 'attachments/photo.bin', bytes: binary },
      { name: 'empty.txt', bytes: new Uint8Array() },
      { name: long, bytes: Buffer.from('deep') },
    ];
    const file = path.join(dir, 'a.tar.gz');
    await writeFile(file, gzipSync(await archive(entries)));
    const listed = execFileSync('tar', ['-tzf', file], { encoding: 'utf8' }).trim().split('\n');
    expect(listed).toEqual(entries.map((entry) => entry.name));
    execFileSync('tar', ['-xzf', file, '-C', dir]);
    for (const entry of entries)
      expect(Buffer.compare(await readFile(path.join(dir, entry.name)), Buffer.from(entry.bytes))).toBe(0);
  });

  it('refuses a path that climbs out of the archive', async () => {
    await expect(archive([{ name: '../x', bytes: new Uint8Array() }])).rejects.toThrow(/relative/);
    await expect(archive([{ name: '/etc/x', bytes: new Uint8Array() }])).rejects.toThrow(/relative/);
  });
});
