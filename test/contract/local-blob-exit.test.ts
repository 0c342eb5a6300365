// The local Blob Storage's emulator runs in a process of its own: a runtime killed outright (SIGKILL, a crash) must
// not leave it behind, holding its port and its data folder.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';

const childScript = fileURLToPath(new URL('../support/blob-child.ts', import.meta.url));

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

it('ends the emulator when the process that started it is killed', async () => {
  const child = spawn(process.execPath, ['--import', 'tsx', childScript], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let emulator: number | undefined;
  try {
    emulator = await new Promise<number>((resolve, reject) => {
      let output = '';
      child.stdout.on('data', (chunk: Buffer) => {
        output += chunk.toString();
        const match = /azurite (\d+)/.exec(output);
        if (match) resolve(Number(match[1]));
      });
      child.once('exit', (code) => reject(new Error(`the child exited (${code}) before Azurite was up`)));
    });
    expect(alive(emulator)).toBe(true);
    child.kill('SIGKILL');
    await expect.poll(() => alive(emulator!), { timeout: 30_000, interval: 100 }).toBe(false);
  } finally {
    child.kill('SIGKILL');
    if (emulator !== undefined && alive(emulator)) process.kill(emulator, 'SIGKILL');
  }
}, 90_000);
