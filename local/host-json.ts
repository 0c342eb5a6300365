// The host.json settings the local runtime honours, so it schedules work as the Functions host would: how many
// Service Bus sessions and messages one instance handles at once.
import { readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';

export interface HostSettings {
  serviceBus: { maxConcurrentSessions?: number | undefined; maxConcurrentCalls?: number | undefined };
}

const hostJsonSchema = z.object({
  extensions: z
    .object({
      serviceBus: z
        .object({
          maxConcurrentSessions: z.number().int().positive().optional(),
          maxConcurrentCalls: z.number().int().positive().optional(),
        })
        .optional(),
    })
    .optional(),
});

/** Reads the project's host.json (found above this module, in source and in dist/); absent → host defaults. */
export async function readHostSettings(path?: string): Promise<HostSettings> {
  const file = path ?? (await findHostJson());
  if (file === undefined) return { serviceBus: {} };
  const parsed = hostJsonSchema.safeParse(JSON.parse(await readFile(file, 'utf8')));
  if (!parsed.success) throw new Error(`${file} is not a valid host.json: ${parsed.error.message}`);
  return { serviceBus: { ...parsed.data.extensions?.serviceBus } };
}

async function findHostJson(): Promise<string | undefined> {
  let folder = dirname(fileURLToPath(import.meta.url));
  for (let level = 0; level < 4; level++) {
    const candidate = join(folder, 'host.json');
    try {
      await readFile(candidate);
      return candidate;
    } catch {
      folder = dirname(folder);
    }
  }
  return undefined;
}
