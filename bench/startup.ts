// Time from `npm start` (node scripts/start.js) to the first 200 from GET /api/health, in a copy of the
// repository: from a clean clone (no dist/, as after `git clone` and `npm install`), on a built tree with a
// fresh data folder, and on a built tree with saved state. Prints medians; it asserts nothing about speed.
import { spawn, spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const RUNS = Number(process.env.RUNS ?? 3);
const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/** The repository's tracked files, copied as a clone would have them, with this checkout's node_modules. */
function cloneOfRepository(): string {
  const clone = mkdtempSync(join(tmpdir(), 'startup-clone-'));
  const listed = spawnSync('git', ['ls-files', '-z'], { cwd: root, encoding: 'utf8' });
  if (listed.status !== 0) throw new Error(`git ls-files failed: ${listed.stderr}`);
  for (const file of listed.stdout.split('\0').filter(Boolean)) {
    mkdirSync(dirname(join(clone, file)), { recursive: true });
    cpSync(join(root, file), join(clone, file));
  }
  symlinkSync(join(root, 'node_modules'), join(clone, 'node_modules'), 'dir');
  return clone;
}

function timeToHealthy(cwd: string, dataDir: string): Promise<number> {
  return new Promise((resolveTime, reject) => {
    const started = performance.now();
    const child = spawn(process.execPath, ['scripts/start.js'], {
      cwd,
      env: { ...process.env, PORT: '0', LOCAL_DATA_DIR: dataDir },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    let polling = false;
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      const url = /listening on (http:\/\/localhost:\d+)\/api/.exec(output)?.[1];
      if (url === undefined || polling) return;
      polling = true;
      void (async () => {
        const health = `${url.replace('localhost', '127.0.0.1')}/api/health`;
        while ((await fetch(health).catch(() => undefined))?.status !== 200)
          await new Promise((wait) => setTimeout(wait, 20));
        const elapsed = performance.now() - started;
        child.once('exit', () => resolveTime(elapsed));
        child.kill('SIGTERM');
      })();
    });
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.once('exit', (code) => {
      if (!polling) reject(new Error(`npm start exited with ${code} before it was ready:\n${output}`));
    });
  });
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
}

const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
const clone = cloneOfRepository();
const kept = mkdtempSync(join(tmpdir(), 'startup-kept-'));
const load = () => loadavg()[0]?.toFixed(1) ?? '?';
try {
  const clean: number[] = [];
  const fresh: number[] = [];
  const existing: number[] = [];
  const loads: string[] = [load()];
  for (let run = 0; run < RUNS; run += 1) {
    rmSync(join(clone, 'dist'), { recursive: true, force: true });
    const dir = mkdtempSync(join(tmpdir(), 'startup-fresh-'));
    try {
      clean.push(await timeToHealthy(clone, dir));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    const other = mkdtempSync(join(tmpdir(), 'startup-fresh-'));
    try {
      fresh.push(await timeToHealthy(clone, other));
    } finally {
      rmSync(other, { recursive: true, force: true });
    }
    existing.push(await timeToHealthy(clone, kept));
    loads.push(load());
  }
  console.log(
    `npm start to a healthy /api/health (median of ${RUNS}): clean clone ${seconds(median(clean))}, ` +
      `built tree ${seconds(median(fresh))}, built tree with saved state ${seconds(median(existing))} ` +
      `(load average ${loads.join(', ')} on ${availableParallelism()} cores)`,
  );
} finally {
  rmSync(kept, { recursive: true, force: true });
  rmSync(clone, { recursive: true, force: true });
}
