// Kill tests of the local stores: a child process writes through the real clients and prints each acknowledged
// write; it is SIGKILLed (no stop, no flush) right after, and a restart on the same folder holds every one of them.
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { createLocalCosmosClient, startLocalCosmos } from '../../local/cosmos/local-cosmos.js';
import { FileInstanceStore } from '../../local/durable/file-instance-store.js';

const childScript = fileURLToPath(new URL('../support/crash-child.ts', import.meta.url));
/** Acknowledgements to see before the kill: enough for many group commits. */
const ACKS_BEFORE_KILL = 100;

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'local-stores-crash-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** Runs the child until it has acknowledged `count` writes, SIGKILLs it at once, and returns the ids it acknowledged. */
function writeThenKill(mode: 'cosmos' | 'durable', count: number): Promise<string[]> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', childScript, mode, dir], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const acked: string[] = [];
    let buffered = '';
    let stderr = '';
    let killed = false;
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.stdout.on('data', (chunk: Buffer) => {
      buffered += chunk.toString();
      const lines = buffered.split('\n');
      buffered = lines.pop() ?? '';
      for (const line of lines) if (line.startsWith('ack ')) acked.push(line.slice(4));
      if (!killed && acked.length >= count) {
        killed = true;
        child.kill('SIGKILL');
      }
    });
    child.once('exit', (code, signal) => {
      if (signal === 'SIGKILL') resolve(acked);
      else reject(new Error(`the child exited with ${code} before it was killed:\n${stderr}`));
    });
  });
}

describe('a local store killed right after acknowledging writes', { timeout: 240_000 }, () => {
  it('Cosmos DB: every item whose create was acknowledged is there after a restart', async () => {
    const acked = await writeThenKill('cosmos', ACKS_BEFORE_KILL);
    expect(acked.length).toBeGreaterThanOrEqual(ACKS_BEFORE_KILL);

    const local = await startLocalCosmos({ dataFile: join(dir, 'cosmos.json') });
    const client = createLocalCosmosClient(local);
    try {
      const { resources } = await client
        .database('crash')
        .container('items')
        .items.query<{ id: string }>('SELECT c.id FROM c')
        .fetchAll();
      const stored = new Set(resources.map((item) => item.id));
      expect(acked.filter((id) => !stored.has(id))).toEqual([]);
    } finally {
      client.dispose();
      await local.stop();
    }
  });

  it('Durable: every instance whose startNew resolved is there after a restart', async () => {
    const acked = await writeThenKill('durable', ACKS_BEFORE_KILL);
    expect(acked.length).toBeGreaterThanOrEqual(ACKS_BEFORE_KILL);

    const store = await FileInstanceStore.open(join(dir, 'durable.json'));
    try {
      const stored = new Set((await store.list()).map((record) => record.instanceId));
      expect(acked.filter((id) => !stored.has(id))).toEqual([]);
    } finally {
      await store.close();
    }
  });
});
