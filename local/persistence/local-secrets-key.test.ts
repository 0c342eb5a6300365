import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { localSecretsKey } from './local-secrets-key.js';

const folders: string[] = [];
afterEach(async () => {
  for (const folder of folders.splice(0)) await rm(folder, { recursive: true, force: true });
});

describe('the local MCP secrets key', () => {
  it('is made once in the data folder, readable by its owner only, and the same after a restart', async () => {
    const folder = await mkdtemp(join(tmpdir(), 'mcp-key-'));
    folders.push(folder);
    const file = join(folder, 'mcp-secrets.key');
    const key = await localSecretsKey(file);
    expect(Buffer.from(key, 'base64')).toHaveLength(32);
    expect(await localSecretsKey(file)).toBe(key);
    expect((await readFile(file, 'utf8')).trim()).toBe(key);
    expect((await stat(file)).mode & 0o077).toBe(0);
  });

  it('without a data folder, is a fresh key each run', async () => {
    expect(await localSecretsKey(undefined)).not.toBe(await localSecretsKey(undefined));
  });
});
