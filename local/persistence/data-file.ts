// The local runtime's data files (Cosmos DB, Service Bus, Durable state). Writes are atomic (temp file,
// fsync, rename) so a crash mid-write leaves the previous version intact; a file that cannot be read is
// reported, never discarded.
import { mkdir, open, readFile, rename, rm } from 'node:fs/promises';
import { dirname } from 'node:path';
import { z } from 'zod';

/** A data file exists but cannot be loaded. Start-up stops; the file is left as is. */
export class CorruptDataFileError extends Error {
  constructor(
    readonly file: string,
    what: string,
    reason: string,
    options?: { cause?: unknown },
  ) {
    super(
      `The ${what} file ${file} cannot be loaded: ${reason}. ` +
        'It was left untouched: repair it, or move it away to start empty.',
      options,
    );
    this.name = 'CorruptDataFileError';
  }
}

/** The file's contents checked against `schema`, or undefined when there is no such file yet. */
export async function readDataFile<T>(
  file: string,
  schema: z.ZodType<T>,
  what: string,
): Promise<T | undefined> {
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
    throw new CorruptDataFileError(file, what, `it is not valid JSON (${(error as Error).message})`, {
      cause: error,
    });
  }
  return parseDataFile(schema, json, file, what);
}

/** `value`, read from `file`, checked against `schema`; CorruptDataFileError naming the file when it does not fit. */
export function parseDataFile<T>(schema: z.ZodType<T>, value: unknown, file: string, what: string): T {
  const parsed = schema.safeParse(value);
  if (!parsed.success)
    throw new CorruptDataFileError(
      file,
      what,
      `its contents are not valid:\n${z.prettifyError(parsed.error)}`,
      {
        cause: parsed.error,
      },
    );
  return parsed.data;
}

let tempCounter = 0;

export async function writeDataFile(file: string, value: unknown): Promise<void> {
  await mkdir(dirname(file), { recursive: true });
  tempCounter += 1;
  const temp = `${file}.${process.pid}.${tempCounter}.tmp`;
  try {
    const handle = await open(temp, 'w');
    try {
      await handle.writeFile(JSON.stringify(value), 'utf8');
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
