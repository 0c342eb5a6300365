import { spawnSync } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DataFolderInUseError, lockDataFolder } from './data-folder-lock.js';

describe('lockDataFolder', () => {
  let folder: string;
  beforeEach(async () => {
    folder = await mkdtemp(join(tmpdir(), 'data-lock-'));
  });
  afterEach(() => rm(folder, { recursive: true, force: true }));

  it('holds the folder for this process until released', async () => {
    const lock = await lockDataFolder(folder);
    expect(await readFile(join(folder, '.lock'), 'utf8')).toBe(String(process.pid));
    await lock.release();
    const again = await lockDataFolder(folder);
    await again.release();
  });

  it('refuses a folder held by another live process, naming it', async () => {
    // The parent of this test process is alive for as long as the test runs.
    await writeFile(join(folder, '.lock'), String(process.ppid));
    const error = await lockDataFolder(folder).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DataFolderInUseError);
    expect((error as Error).message).toContain(folder);
    expect((error as Error).message).toContain(String(process.ppid));
  });

  it('takes over a lock left by a process that is gone', async () => {
    const gone = spawnSync(process.execPath, ['-e', 'process.exit(0)']).pid;
    await writeFile(join(folder, '.lock'), String(gone));
    const lock = await lockDataFolder(folder);
    expect(await readFile(join(folder, '.lock'), 'utf8')).toBe(String(process.pid));
    await lock.release();
  });
});
