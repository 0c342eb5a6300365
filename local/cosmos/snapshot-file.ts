// Reads and writes the local Cosmos DB data file. Writes are atomic (temp file, fsync, rename) so a crash
// mid-write leaves the previous snapshot intact; a file that cannot be read is reported, never discarded.
import { mkdir, open, readFile, rename, rm } from 'node:fs/promises';
import { dirname } from 'node:path';

import { z } from 'zod';

import { accountSnapshotSchema, type AccountSnapshot } from './account-snapshot.js';

/** The data file exists but is not a snapshot this code can load. Start-up stops; the file is left as is. */
export class CorruptDataFileError extends Error {
  constructor(
    readonly file: string,
    reason: string,
    options?: { cause?: unknown },
  ) {
    super(
      `The local Cosmos DB data file ${file} cannot be loaded: ${reason}. ` +
        'It was left untouched: repair it, or move it away to start with an empty database.',
      options,
    );
    this.name = 'CorruptDataFileError';
  }
}

/** The snapshot in `file`, or undefined when there is no such file yet. */
export async function readSnapshotFile(file: string): Promise<AccountSnapshot | undefined> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new CorruptDataFileError(file, `it is not valid JSON (${(error as Error).message})`, {
      cause: error,
    });
  }
  const parsed = accountSnapshotSchema.safeParse(json);
  if (!parsed.success) {
    throw new CorruptDataFileError(
      file,
      `it is not a local Cosmos DB snapshot:\n${z.prettifyError(parsed.error)}`,
      {
        cause: parsed.error,
      },
    );
  }
  return parsed.data;
}

let tempCounter = 0;

export async function writeSnapshotFile(file: string, snapshot: AccountSnapshot): Promise<void> {
  await mkdir(dirname(file), { recursive: true });
  tempCounter += 1;
  const temp = `${file}.${process.pid}.${tempCounter}.tmp`;
  try {
    const handle = await open(temp, 'w');
    try {
      await handle.writeFile(JSON.stringify(snapshot), 'utf8');
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(temp, file);
  } catch (error) {
    await rm(temp, { force: true });
    throw error;
  }
}
