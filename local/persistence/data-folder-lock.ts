// One local runtime per data folder: a second one would overwrite the first's files. The lock file holds
// the owner's process id; a lock whose process is gone (a crash) is taken over.
import { open, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';

export class DataFolderInUseError extends Error {
  constructor(
    readonly folder: string,
    readonly ownerPid: number,
  ) {
    super(
      `The data folder ${folder} is in use by another local runtime (process ${ownerPid}). ` +
        'Stop it, or give this one its own folder with LOCAL_DATA_DIR.',
    );
    this.name = 'DataFolderInUseError';
  }
}

export interface DataFolderLock {
  release(): Promise<void>;
}

export async function lockDataFolder(folder: string): Promise<DataFolderLock> {
  const file = join(folder, '.lock');
  for (let attempt = 0; attempt < 2; attempt += 1) {
    try {
      const handle = await open(file, 'wx');
      await handle.writeFile(String(process.pid));
      await handle.close();
      return { release: () => rm(file, { force: true }) };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const owner = Number.parseInt(await readFile(file, 'utf8').catch(() => ''), 10);
      if (Number.isInteger(owner) && owner !== process.pid && isAlive(owner)) {
        throw new DataFolderInUseError(folder, owner);
      }
      // Left behind by a process that is gone (or unreadable): take it over.
      await rm(file, { force: true });
    }
  }
  throw new Error(`Could not lock the data folder ${folder}.`);
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: the process exists but belongs to someone else.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
