// The built local runtime (`node dist/local/start.js`) as a child process that a test can SIGKILL and start again
// on the same data folder and port, so the URLs clients hold stay valid across crashes. It is built into its own
// folder, so a test that builds `dist/` at the same time never hands this one a half-written file.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, rmSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../..', import.meta.url));

/** The folder every crash test runs the built product from: one compile per run, whichever test asks first. */
const RUNTIME_BUILD = 'crashable-runtime-dist';

/**
 * Compiles the product as `npm run build` does, into a folder of its own; the path of its start entry. Test files
 * run in parallel workers and all ask for the same build: a lock folder lets one compile while the others wait, and
 * they then find it up to date (the compile is incremental), so a run compiles once however many crash tests it has.
 */
export function buildRuntime(): string {
  // Named after the checkout too: checkouts that share one node_modules (git worktrees) must not build into, and
  // run from, the same folder.
  const checkout = createHash('sha256').update(root).digest('hex').slice(0, 12);
  const outDir = join(root, 'node_modules', '.cache', `${RUNTIME_BUILD}-${checkout}`);
  const release = takeLock(`${outDir}.lock`);
  try {
    const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
    const args = ['-p', join(root, 'tsconfig.json'), '--outDir', outDir, '--incremental'];
    const result = spawnSync(
      process.execPath,
      [tsc, ...args, '--tsBuildInfoFile', join(outDir, '.tsbuildinfo')],
      { encoding: 'utf8' },
    );
    if (result.status !== 0) throw new Error(`build failed:\n${result.stdout}${result.stderr}`);
  } finally {
    release();
  }
  return join(outDir, 'local', 'start.js');
}

/** Holds `path` (a folder made only if absent) until released; a lock left by a killed run goes after 10 minutes. */
function takeLock(path: string): () => void {
  mkdirSync(dirname(path), { recursive: true });
  const wait = new Int32Array(new SharedArrayBuffer(4));
  for (;;) {
    try {
      mkdirSync(path, { recursive: false });
      return () => rmSync(path, { recursive: true, force: true });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      if (Date.now() - statMtime(path) > 10 * 60_000) rmSync(path, { recursive: true, force: true });
      else Atomics.wait(wait, 0, 0, 500);
    }
  }
}

function statMtime(path: string): number {
  try {
    return statSync(path).mtimeMs;
  } catch {
    return Date.now();
  }
}

export interface CrashableRuntimeOptions {
  /** The compiled start entry (buildRuntime). */
  entry: string;
  /** Working folder of the process (no local.settings.json there, so only `settings` apply). */
  cwd: string;
  dataDir: string;
  /** Further settings, as environment variables. */
  settings: Record<string, string>;
  /** How long a start may take before it counts as failed. */
  startTimeoutMs?: number;
}

/** A run of the process that ended without the test asking it to. */
export interface UnexpectedExit {
  atMs: number;
  code: number | null;
  signal: string | null;
  stderrTail: string;
}

export class StartFailure extends Error {}

export class CrashableRuntime {
  /** Base URL (http://127.0.0.1:PORT), fixed by the first start. */
  url: string | undefined;
  readonly unexpectedExits: UnexpectedExit[] = [];
  private port = 0;
  private child: ChildProcess | undefined;
  private exited: Promise<void> = Promise.resolve();
  private stderr = '';
  private readonly startedAt = Date.now();

  constructor(private readonly options: CrashableRuntimeOptions) {}

  get up(): boolean {
    return this.child !== undefined;
  }

  /** Milliseconds since this object was made: the clock every report of a run uses. */
  now(): number {
    return Date.now() - this.startedAt;
  }

  /** The last lines the process (in any of its lives) wrote to stderr. */
  stderrTail(lines = 20): string {
    return this.stderr.split('\n').slice(-lines).join('\n');
  }

  /** Starts the process and resolves once it prints that it listens; a start that fails throws StartFailure. */
  async start(): Promise<void> {
    if (this.child) throw new Error('the runtime is already running');
    const child = spawn(process.execPath, [this.options.entry], {
      cwd: this.options.cwd,
      env: {
        PATH: process.env.PATH ?? '',
        HOME: process.env.HOME ?? '',
        ...this.options.settings,
        PORT: String(this.port),
        LOCAL_DATA_DIR: this.options.dataDir,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.stderr += `--- start at ${this.now()} ms (pid ${child.pid}) ---\n`;
    let stdout = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on(
      'data',
      (chunk: Buffer) => (this.stderr = (this.stderr + chunk.toString()).slice(-64_000)),
    );
    let exit: { code: number | null; signal: string | null } | undefined;
    this.exited = new Promise((resolve) =>
      child.once('exit', (code, signal) => {
        exit = { code, signal };
        // kill() and stop() let go of the child first: a child still held here ended on its own.
        if (this.child === child) {
          this.child = undefined;
          this.unexpectedExits.push({ atMs: this.now(), code, signal, stderrTail: this.stderrTail() });
        }
        resolve();
      }),
    );
    const deadline = Date.now() + (this.options.startTimeoutMs ?? 60_000);
    for (;;) {
      const url = /listening on (http:\/\/localhost:(\d+))\/api/.exec(stdout);
      if (url) {
        this.port = Number(url[2]);
        this.url = url[1]!.replace('localhost', '127.0.0.1');
        this.child = child;
        return;
      }
      if (exit)
        throw new StartFailure(
          `the runtime exited (${exit.code ?? exit.signal}) while starting:\n${this.stderrTail()}`,
        );
      if (Date.now() > deadline) {
        child.kill('SIGKILL');
        await this.exited;
        throw new StartFailure(`the runtime did not start within the time allowed:\n${this.stderrTail()}`);
      }
      await sleep(20);
    }
  }

  /** SIGKILL: the process dies at once, whatever it was doing. */
  async kill(): Promise<void> {
    const child = this.child;
    if (!child) return;
    this.child = undefined;
    child.kill('SIGKILL');
    await this.exited;
  }

  /** SIGTERM, as `npm start` is stopped; a process that does not stop within the time allowed is killed. */
  async stop(timeoutMs = 15_000): Promise<'stopped' | 'killed'> {
    const child = this.child;
    if (!child) return 'stopped';
    this.child = undefined;
    child.kill('SIGTERM');
    const stopped = await Promise.race([this.exited.then(() => true), sleep(timeoutMs).then(() => false)]);
    if (stopped) return 'stopped';
    child.kill('SIGKILL');
    await this.exited;
    return 'killed';
  }
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
