// Settings of the local runtime itself (port, data folder, log level) and the local.settings.json file
// that Functions Core Tools also reads: its Values apply unless the environment sets the same name.
import { readFile } from 'node:fs/promises';
import type { LogLevel } from '@azure/functions';
import { z } from 'zod';
import { ConfigError } from '../shared/config.js';

export interface LocalRuntimeSettings {
  port: number;
  dataDir: string;
  logLevel: LogLevel;
}

const schema = z.object({
  PORT: z.coerce.number({ error: 'must be a port number' }).int().min(0).max(65535).default(7071),
  LOCAL_DATA_DIR: z.string().min(1).default('.local-data'),
  LOG_LEVEL: z.enum(['trace', 'debug', 'information', 'warning', 'error']).default('warning'),
});

export function parseLocalRuntimeSettings(
  env: Readonly<Record<string, string | undefined>>,
): LocalRuntimeSettings {
  const present = Object.fromEntries(
    Object.entries(env).filter(([, value]) => value !== undefined && value !== ''),
  );
  const parsed = schema.safeParse(present);
  if (!parsed.success) throw ConfigError.fromIssues(parsed.error, present);
  return { port: parsed.data.PORT, dataDir: parsed.data.LOCAL_DATA_DIR, logLevel: parsed.data.LOG_LEVEL };
}

/** The environment overlaid on local.settings.json's Values (the environment wins, as with Core Tools). */
export async function readSettings(
  file: string,
  env: Readonly<Record<string, string | undefined>>,
): Promise<Record<string, string | undefined>> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { ...env };
    throw error;
  }
  const fileSchema = z.object({ Values: z.record(z.string(), z.string()).default({}) });
  let parsed: z.infer<typeof fileSchema>;
  try {
    parsed = fileSchema.parse(JSON.parse(text));
  } catch (error) {
    throw new ConfigError([
      {
        setting: file,
        problem: `is not a valid settings file (${error instanceof Error ? error.message.split('\n')[0] : 'unreadable'}); it must be JSON with string "Values"`,
      },
    ]);
  }
  return { ...parsed.Values, ...env };
}
