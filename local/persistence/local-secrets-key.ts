// The key the local runtime gives the app to seal MCP header values (MCP_SECRETS_KEY) when the user set none: made
// once and kept in the data folder, so sealed values open again after a restart; without a folder, one per run.
import { randomBytes } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';

export async function localSecretsKey(file: string | undefined): Promise<string> {
  if (file === undefined) return randomBytes(32).toString('base64');
  try {
    const kept = (await readFile(file, 'utf8')).trim();
    if (/^[A-Za-z0-9+/]{43}=$/.test(kept)) return kept;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  const key = randomBytes(32).toString('base64');
  await writeFile(file, `${key}\n`, { mode: 0o600 });
  return key;
}
