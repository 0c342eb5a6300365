// Time from launching the compiled local runtime (what `npm start` runs after building) to its ready line,
// with a fresh data folder and with one holding saved state, interleaved in one run. Prints medians; it
// asserts nothing about speed.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const RUNS = Number(process.env.RUNS ?? 7);

function timeToReady(dataDir: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(process.execPath, ['dist/local/start.js'], {
      env: { ...process.env, PORT: '0', LOCAL_DATA_DIR: dataDir },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      if (!/listening on/.test(output)) return;
      const elapsed = performance.now() - started;
      child.once('exit', () => resolve(elapsed));
      child.kill('SIGTERM');
    });
    child.once('exit', (code) => {
      if (!/listening on/.test(output))
        reject(new Error(`the runtime exited with ${code} before it was ready`));
    });
  });
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
}

const kept = mkdtempSync(join(tmpdir(), 'startup-kept-'));
try {
  await timeToReady(kept); // leaves saved state behind
  const fresh: number[] = [];
  const existing: number[] = [];
  for (let run = 0; run < RUNS; run += 1) {
    const dir = mkdtempSync(join(tmpdir(), 'startup-fresh-'));
    try {
      fresh.push(await timeToReady(dir));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    existing.push(await timeToReady(kept));
  }
  console.log(
    `local runtime ready after (median of ${RUNS}): fresh data folder ${median(fresh).toFixed(0)} ms, ` +
      `existing data folder ${median(existing).toFixed(0)} ms`,
  );
} finally {
  rmSync(kept, { recursive: true, force: true });
}
